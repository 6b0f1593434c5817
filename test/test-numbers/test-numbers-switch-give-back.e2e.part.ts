/**
 * A test number's switch whose session the store could not keep, twin of its start's (test-numbers.e2e):
 * nothing was played, so what the switch took is given back: the method's resend cooldown and the address's
 * start. The same switch again goes through and its session verifies with the fixed code.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreWriteOptions } from '../../src/store/verification-store.interface.js';
import { CapturingLogger } from '../support/log-capture.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

const REVIEWER = '+79990000001';
const CODE = '246810';

describe.each(PLATFORMS)('test numbers: a switch the store could not keep (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let host: TestApp | undefined;
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });

  it('gives back what it took, logging the store’s failure: the same switch again is played, not 429, and verifies', async () => {
    let refuse = false;
    const store = new (class extends MemoryStore {
      override async set(key: string, value: string, ttlMs: number, options?: StoreWriteOptions) {
        if (refuse && key.includes('test-number:session:')) {
          refuse = false;
          throw new Error('store refused the write');
        }
        return super.set(key, value, ttlMs, options);
      }
    })({ clock: () => suite.sb.now() });
    const logger = new CapturingLogger();
    try {
      host = await startAccountHost(platform, suite.sb, {
        module: {
          store,
          logger,
          testNumbers: { numbers: [{ phoneNumber: REVIEWER, code: CODE }] },
          // The start and one switch: a switch that kept what it took leaves the address nothing.
          limits: { startPerIp: { points: 2, windowMs: 3_600_000 }, spendCap: false, pumping: false },
        },
      });
      const post = (path: string, body: unknown) =>
        call(host!.url, 'POST', `/verification/${path}`, body, { 'x-user': 'reviewer' });
      const started = await post('start', { phone_number: REVIEWER, method: 'sms' });
      expect(started.status).toBe(201);
      const id = started.body.verification_id;

      refuse = true;
      const failed = await post('switch', { verification_id: id, method: 'flash_call' });
      expect({ status: failed.status, error_code: failed.body.error_code }).toEqual({
        status: 503,
        error_code: 'service_unavailable',
      });
      expect(refuse).toBe(false);
      // Logged with the store's own failure: giving back what the switch took adds none of its own.
      expect(logger.lines.filter((line) => line.startsWith('error switch failed'))).toStrictEqual([
        expect.stringContaining('store refused the write'),
      ]);

      const again = await post('switch', { verification_id: id, method: 'flash_call' });
      expect({ status: again.status, method: again.body.method }).toEqual({
        status: 201,
        method: 'flash_call',
      });
      const checked = await post('check', { verification_id: id, code: CODE });
      expect(checked.body).toMatchObject({ verified: true });
    } finally {
      await host?.close();
      host = undefined;
      await store.close();
    }
  });
});
