/**
 * fast-check arbitraries of hostile input for the client and webhook routes, each invalid by
 * construction (so any upstream call is a bug), and a predictor of which bodies a host's own
 * JSON parser refuses before any route runs.
 */
import fc from 'fast-check';
import type { Platform } from '../../support/verification-app.js';

/** Method names the routes accept (the deployment's defaults plus the schema's `msgr1`). */
export const VALID_METHODS = [
  'reverse_flash_call',
  'flash_call',
  'msgr1_otp',
  'msgr1',
  'msgr2_bot',
  'sms',
  'operator_id',
];
export const POLLUTING_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** An object with `key` as an own enumerable property, whatever the key (`__proto__` included). */
export function withOwn(
  target: Record<string, unknown>,
  key: string,
  value: unknown,
): Record<string, unknown> {
  Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
  return target;
}

/** Unicode text of every kind: astral, combining, RTL, control characters, lone surrogates. */
const unicode = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '\u202e+79123456789',
    '٠٩١٢٣٤٥٦٧٨٩',
    '\ud800',
    '\u0000',
    'ǅ\u0301\u0302',
    '🙂📞',
    '𝟗𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗',
  ),
);

/** Any JSON value, hostile strings included (no huge ones: they have their own case). */
export const junk: fc.Arbitrary<unknown> = fc.oneof(
  unicode,
  fc.string({ minLength: 200, maxLength: 4000 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.integer().map(String),
  fc.constantFrom(
    ...POLLUTING_KEYS,
    'toString',
    'valueOf',
    'hasOwnProperty',
    '0',
    '-1',
    '1e309',
    'NaN',
    'true',
  ),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 }),
);

/** A phone_number that no normaliser accepts: wrong types, digit-free text, too short, too long. */
const invalidPhone: fc.Arbitrary<unknown> = fc.oneof(
  junk.filter((v) => typeof v !== 'string' || !hasEnoughDigits(v)),
  fc.integer({ min: 0, max: 999_999 }).map(String),
  fc.stringMatching(/^\+7\d{15,40}$/),
  fc.stringMatching(/^[ ()+-]{1,30}$/),
);

/** A method that is not offered: wrong types, near misses, case changes, unicode. */
const invalidMethod: fc.Arbitrary<unknown> = fc.oneof(
  junk.filter((v) => !VALID_METHODS.includes(v as string)),
  fc.constantFrom('SMS', 'sms ', ' sms', 'voice', 'msgr1_OTP', 'sms\u0000', 'ѕms', 'flash-call', ''),
);

const validPhone = fc.stringMatching(/^\+7912\d{7}$/);

/** Start bodies: non-objects, arrays for objects, wrong or missing fields, extra and polluting keys. */
export const startBody: fc.Arbitrary<unknown> = fc.oneof(
  // Not an object at all.
  fc.oneof(fc.array(junk, { maxLength: 3 }), unicode, fc.integer(), fc.constant(null), fc.boolean()),
  // An array where an object belongs.
  fc.record({ phone_number: validPhone, method: fc.constantFrom(...VALID_METHODS) }).map((b) => [b]),
  // Wrong method (the phone may be fine).
  fc.record(
    { phone_number: fc.oneof(validPhone, invalidPhone), method: invalidMethod },
    { requiredKeys: ['method'] },
  ),
  // Wrong phone (the method is fine).
  fc.record({ phone_number: invalidPhone, method: fc.constantFrom(...VALID_METHODS) }),
  // Missing the number (a missing method is `auto`: a valid start).
  fc.record({ method: fc.constantFrom(...VALID_METHODS) }),
  // A device hint that is not one.
  fc.record({
    phone_number: validPhone,
    method: fc.constantFrom(...VALID_METHODS),
    device: junk.filter((v) => v !== 'mobile' && v !== 'desktop'),
  }),
  // Valid fields plus an extra or prototype-polluting key.
  fc
    .tuple(
      fc.oneof(fc.constantFrom(...POLLUTING_KEYS), fc.string({ minLength: 1, maxLength: 20 })),
      fc.oneof(junk, fc.constant({ polluted: true }), fc.constant({ prototype: { polluted: true } })),
      validPhone,
      fc.constantFrom(...VALID_METHODS),
    )
    .filter(([key]) => key !== 'phone_number' && key !== 'method' && key !== 'device')
    .map(([key, value, phone, method]) => withOwn({ phone_number: phone, method }, key, value)),
);

/** Check bodies that must never reach the API: bad codes, unknown or forged ids, extra keys. */
export function checkBody(realHandles: string[]): fc.Arbitrary<unknown> {
  const badCode = fc.oneof(
    junk.filter((v) => typeof v !== 'string' || !/^\d{4,8}$/.test(v)),
    fc.stringMatching(/^\d{1,3}$/),
    fc.stringMatching(/^\d{9,20}$/),
    fc.constantFrom('12 34', '１２３４', '1234\n', '0x1234', '-1234', '12.34', '٠١٢٣'),
  );
  const goodCode = fc.stringMatching(/^\d{4,8}$/);
  const forgedId = fc.oneof(
    junk,
    fc.stringMatching(/^[A-Za-z0-9_-]{20,120}$/),
    fc
      .constantFrom(...realHandles)
      .chain((h) =>
        fc
          .integer({ min: 0, max: h.length - 1 })
          .map((i) => h.slice(0, i) + (h[i] === 'A' ? 'B' : 'A') + h.slice(i + 1)),
      ),
    fc.constantFrom(...realHandles).map((h) => h.slice(0, -2)),
    fc.constantFrom(...realHandles).map((h) => `${h}=`),
  );
  return fc.oneof(
    fc.oneof(fc.array(junk, { maxLength: 3 }), unicode, fc.integer(), fc.constant(null)),
    fc.record({ verification_id: fc.constantFrom(...realHandles), code: badCode }),
    fc.record({ verification_id: forgedId, code: fc.oneof(goodCode, badCode) }),
    fc.record({ verification_id: fc.constantFrom(...realHandles) }),
    fc
      .tuple(
        fc.oneof(fc.constantFrom(...POLLUTING_KEYS), fc.string({ minLength: 1, maxLength: 20 })),
        junk,
        goodCode,
      )
      .filter(([key]) => key !== 'verification_id' && key !== 'code')
      .map(([key, value, code]) => withOwn({ verification_id: realHandles[0], code }, key, value)),
  );
}

/** Path ids for GET /status/:id: unicode, huge, forged, traversal, encoded separators. */
export function statusId(realHandles: string[]): fc.Arbitrary<string> {
  return fc
    .oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }).filter((s) => isWellFormed(s)),
      fc.string({ minLength: 90, maxLength: 400 }),
      fc.constantFrom(
        '..',
        '../methods',
        '%2e%2e',
        '__proto__',
        'constructor',
        'null',
        'undefined',
        '0',
        '-1',
        'a/b',
      ),
      fc.constantFrom(...realHandles).map((h) => h.slice(0, -1) + (h.endsWith('A') ? 'B' : 'A')),
      fc.constantFrom(...realHandles).map((h) => h.toUpperCase()),
    )
    .filter((s) => s !== '.' && s !== '..' && s.length > 0);
}

/** Text a header may carry (fetch refuses control characters): printable ASCII only. */
export function printable(text: string): string {
  return [...text].filter((c) => c >= ' ' && c <= '~').join('');
}

function hasEnoughDigits(text: string): boolean {
  return (text.match(/\p{Nd}/gu) ?? []).length >= 5;
}

function isWellFormed(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

/** True when any object inside `value` has an own key for which `test(key, child)` holds. */
function someOwnKey(value: unknown, test: (key: string, child: unknown) => boolean): boolean {
  if (typeof value !== 'object' || value === null) return false;
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    if (test(key, child) || someOwnKey(child, test)) return true;
  }
  return false;
}

/**
 * Whether the host's own JSON parser refuses this `application/json` body before any route runs
 * (the host's 400, not the module's problem document): Express' body-parser in strict mode takes
 * only objects and arrays at the top; Fastify's secure-json-parse refuses `__proto__` keys and
 * `constructor.prototype`.
 */
export function hostRefusesJson(platform: Platform, body: unknown): boolean {
  if (platform === 'express') return typeof body !== 'object' || body === null;
  return someOwnKey(
    body,
    (key, child) =>
      key === '__proto__' ||
      (key === 'constructor' &&
        typeof child === 'object' &&
        child !== null &&
        Object.hasOwn(child, 'prototype')),
  );
}
