/**
 * The time-to-verify histogram in seconds, at its buckets' bounds, on the module's clock: a session
 * verified 10 s after its start counts in the `le="10"` bucket, one verified a millisecond later only
 * from `le="20"` on, and the histogram's sum is the seconds they took (what a dashboard's quantiles and
 * averages read).
 */
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import { bootHost } from './support/ops-host.js';

const P = 'ttv_';

describe.each(PLATFORMS)(
  'metrics: time to verify, in seconds at the bucket bounds (%s)',
  (platform: Platform) => {
    const suite = sandboxSuite();

    /** Starts an SMS verification, delivers it and types its code `afterMs` after the start. */
    const verifyAfter = async (host: TestApp, phone: string, afterMs: number) => {
      const sb = suite.sb;
      const started = await call(host.url, 'POST', '/verification/start', {
        phone_number: phone,
        method: 'sms',
      });
      expect(started.status).toBe(201);
      const requestId = sb.sessionsFor(phone)[0]!.request_id;
      await sb.deliver(requestId);
      await sb.advance(afterMs);
      const checked = await call(host.url, 'POST', '/verification/check', {
        verification_id: started.body.verification_id,
        code: String(sb.getSession(requestId)!.code),
      });
      expect(checked.body.verified).toBe(true);
    };

    it('10 s is in le="10"; 10.001 s from le="20" on; the sum is the seconds', async () => {
      const registry = new Registry();
      const host = await suite.boot(() =>
        bootHost({ sb: suite.sb, platform, module: { metrics: { enabled: true, registry, prefix: P } } }),
      );
      await verifyAfter(host, '+79123458801', 10_000);
      await verifyAfter(host, '+79123458802', 10_001);
      // What the host's /metrics serves.
      const text = await registry.metrics();
      const sample = (suffix: string, le?: string) => {
        const labels = le === undefined ? '{method="sms"}' : `{le="${le}",method="sms"}`;
        const line = text
          .split('\n')
          .find((l) => l.startsWith(`${P}method_time_to_verify_seconds${suffix}${labels} `));
        return line === undefined ? undefined : Number(line.split(' ').at(-1));
      };
      expect({
        le5: sample('_bucket', '5'),
        le10: sample('_bucket', '10'),
        le20: sample('_bucket', '20'),
        count: sample('_count'),
      }).toEqual({ le5: 0, le10: 1, le20: 2, count: 2 });
      expect(sample('_sum')).toBeCloseTo(20.001, 6);
    });

    it('an SIM push fallen back to SMS (code_required) is no outcome: one verified session counts once', async () => {
      const registry = new Registry();
      const sb = suite.sb;
      const host = await suite.boot(() =>
        bootHost({ sb, platform, module: { metrics: { enabled: true, registry, prefix: P } } }),
      );
      const phone = '+79123458803';
      const started = await call(host.url, 'POST', '/verification/start', {
        phone_number: phone,
        method: 'operator_id',
      });
      expect(started.status).toBe(201);
      const requestId = sb.sessionsFor(phone)[0]!.request_id;
      await sb.operator(requestId, 'fallback');
      // The next poll interval's read sees the fallback: the module emits verification.code_required.
      await sb.advance(5_000);
      const status = await call(host.url, 'GET', `/verification/status/${started.body.verification_id}`);
      expect(status.body).toMatchObject({ status: 'sent', awaiting_code: true });
      const checked = await call(host.url, 'POST', '/verification/check', {
        verification_id: started.body.verification_id,
        code: String(sb.getSession(requestId)!.code),
      });
      // The operator's result follows the accepted code; the next poll interval's read sees it.
      expect(checked.body).toMatchObject({ status: 'sent', verified: false });
      await sb.advance(5_000);
      const done = await call(host.url, 'GET', `/verification/status/${started.body.verification_id}`);
      expect(done.body.status).toBe('verified');
      const outcomes = (await registry.metrics())
        .split('\n')
        .filter((line) => line.startsWith(`${P}outcomes_total{`));
      expect(outcomes).toEqual([`${P}outcomes_total{method="operator_id",status="verified"} 1`]);
    });
  },
);
