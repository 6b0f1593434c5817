/**
 * Graded answers on their two paths (the per-address limit and the spend cap), one table over the
 * option shapes: grading with methods charged on proof offered (409 `method_held`, Retry-After the
 * held limit's real wait), none offered (an empty offer grades nobody: the refusal as before), and
 * monitor mode (nothing graded). Over real HTTP.
 */
import { describe, expect, it } from '@jest/globals';
import type { LimitsOptions, VerificationModuleOptions } from '../../src/options/verification.options.js';
import { ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import {
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  refusal,
  retryAfterRange,
  startFrom,
  timed,
} from './protection-host.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;

interface Path {
  held: 'start_ip_limit' | 'spend_cap';
  limits: LimitsOptions;
  /** The refusal when nothing grades it. */
  refused: { status: number; reason: string };
  /** Starts that fit (from one address for the per-address limit). */
  fit: number;
}

const PATHS: Path[] = [
  {
    held: 'start_ip_limit',
    limits: { startPerIp: { points: 2, windowMs: HOUR } },
    refused: { status: 429, reason: 'start_ip_limit' },
    fit: 2,
  },
  {
    held: 'spend_cap',
    // Two SMS at 3.00; no share kept back, so both modes see the same cap.
    limits: { startPerIp: false, spendCap: { amount: 6, windowMs: DAY }, pumping: { reserveShare: 0 } },
    refused: { status: 503, reason: 'spend_cap' },
    fit: 2,
  },
];

interface Shape {
  name: string;
  pumping: LimitsOptions['pumping'];
  extra: Partial<VerificationModuleOptions>;
  graded: boolean;
}

const SHAPES: Shape[] = [
  { name: 'grading, methods charged on proof offered', pumping: {}, extra: {}, graded: true },
  { name: 'grading, none offered', pumping: {}, extra: { methods: ['sms', 'flash_call'] }, graded: false },
  { name: 'monitor mode', pumping: { mode: 'monitor' }, extra: {}, graded: false },
];

const CASES = ONE_PLATFORM.flatMap((platform) =>
  PATHS.flatMap((path) => SHAPES.map((shape) => [path.held, shape.name, platform, path, shape] as const)),
);

describe('graded answers on both paths, in each option shape', () => {
  const fx = protectionFixture();

  it.each(CASES)(
    '%s, %s (%s): the start past it is graded or refused as before, with Retry-After the real wait; nothing is sent',
    async (_held, _shape, platform, path, shape) => {
      const pumping = { ...(path.limits.pumping as object), ...(shape.pumping as object) };
      const host: TestApp = await protectedHost(fx.sb, platform, { ...path.limits, pumping }, shape.extra);
      fx.host = host;
      const ip = freshIp();
      const [, firstSent, firstReceived] = await timed(fx.sb, () => startFrom(host, ip, freshPhone()));
      for (let i = 1; i < path.fit; i++) expect((await startFrom(host, ip, freshPhone())).status).toBe(201);
      const posts = fx.sb.requestCount('POST /v1/verify');
      const [past, sentAt, receivedAt] = await timed(fx.sb, () => startFrom(host, ip, freshPhone()));
      expect(refusal(past)).toMatchObject(
        shape.graded
          ? { status: 409, errorCode: 'method_held', held: path.held }
          : { status: path.refused.status, reason: path.refused.reason },
      );
      if (shape.graded) expect(past.body.offered_methods).toEqual(['reverse_flash_call', 'msgr2_bot']);
      else expect(past.body).not.toHaveProperty('offered_methods');
      const [endMin, endMax] =
        path.held === 'spend_cap'
          ? [Math.floor(sentAt / DAY + 1) * DAY, Math.floor(receivedAt / DAY + 1) * DAY]
          : [firstSent + HOUR, firstReceived + HOUR];
      expect(retryAfterRange(endMin, endMax, sentAt, receivedAt)).toContain(
        Number(past.headers.get('retry-after')),
      );
      expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts);
    },
  );
});
