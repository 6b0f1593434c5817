/**
 * The browser key's cookie, read and written as Express and Fastify requests carry it: only the form the
 * module issues is accepted back (22 base64url characters, exactly), only under its own name, and on https
 * only the `__Host-` cookie (a plain one may have been planted from a sibling subdomain).
 */
import { describe, expect, it } from '@jest/globals';
import { newBrowserKey, readBrowserKey, setBrowserKeyCookie } from './browser-key.cookie.js';

const KEY = 'AbCdEfGhIjKlMnOpQrSt_-';
const http = (cookie: string) => ({ protocol: 'http', headers: { cookie } });
const https = (cookie: string) => ({ protocol: 'https', headers: { cookie } });

describe('readBrowserKey', () => {
  it.each([
    ['the key alone', `pv_browser=${KEY}`, KEY],
    ['among other cookies', `theme=dark; pv_browser=${KEY}; lang=ru`, KEY],
    ['with spaces around its value', `theme=dark;  pv_browser= ${KEY} ; lang=ru`, KEY],
    ['one character short', `pv_browser=${KEY.slice(1)}`, undefined],
    ['one character long', `pv_browser=${KEY}A`, undefined],
    ['a character outside base64url', `pv_browser=${KEY.slice(1)}+`, undefined],
    ['under a name that only ends like it', `my_pv_browser=${KEY}`, undefined],
    ['the https name over http', `__Host-pv_browser=${KEY}`, undefined],
  ])('over http, %s: %s', (_, cookie, key) => {
    expect(readBrowserKey(http(cookie))).toBe(key);
  });

  it('over https only the __Host- cookie counts', () => {
    expect(readBrowserKey(https(`__Host-pv_browser=${KEY}`))).toBe(KEY);
    expect(readBrowserKey(https(`pv_browser=${KEY}`))).toBeUndefined();
  });

  it('no cookie header, or one that is not a string: no key', () => {
    expect(readBrowserKey({ headers: {} })).toBeUndefined();
    expect(readBrowserKey({ headers: { cookie: [`pv_browser=${KEY}`] } })).toBeUndefined();
    expect(readBrowserKey(undefined)).toBeUndefined();
  });

  it('a key the module issues is one it accepts back, and two are never alike', () => {
    const issued = newBrowserKey();
    expect(readBrowserKey(http(`pv_browser=${issued}`))).toBe(issued);
    expect(newBrowserKey()).not.toBe(issued);
  });
});

describe('setBrowserKeyCookie', () => {
  const written = (request: object, reply: 'express' | 'fastify') => {
    const headers: [string, string][] = [];
    const response =
      reply === 'express'
        ? { append: (name: string, value: string) => headers.push([name, value]) }
        : { header: (name: string, value: string) => headers.push([name, value]) };
    setBrowserKeyCookie(request, response, KEY, '/api/verification');
    return headers;
  };

  it.each(['express', 'fastify'] as const)(
    'over http on %s: HttpOnly, SameSite=Strict, on the routes path',
    (reply) => {
      expect(written(http(''), reply)).toEqual([
        [
          reply === 'express' ? 'Set-Cookie' : 'set-cookie',
          `pv_browser=${KEY}; Path=/api/verification; HttpOnly; SameSite=Strict`,
        ],
      ]);
    },
  );

  it.each(['express', 'fastify'] as const)('over https on %s: __Host-, Path=/, Secure', (reply) => {
    expect(written(https(''), reply)).toEqual([
      [
        reply === 'express' ? 'Set-Cookie' : 'set-cookie',
        `__Host-pv_browser=${KEY}; Path=/; HttpOnly; SameSite=Strict; Secure`,
      ],
    ]);
  });
});
