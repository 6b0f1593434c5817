/**
 * Attack (bad luck; 998813f: the country level of method health): the level a prefix is judged at is
 * chosen at every read: its own window once it holds HEALTH_MIN_SESSIONS (20) outcomes, else its
 * country's. An outage of the reverse call on +7 915 whose users come about once a minute (gaps of
 * 45 to 80 s) puts its own window at 19 or 20 outcomes, read after read: at 20 it is judged on its
 * own (0 %: dropped, degraded), at 19 on its country's, where +7 926's users (six a minute) complete
 * it (recovered, healthy). Each degradation starts the 20 minutes a demotion needs again, so it is never
 * demoted: for the outage's hour every +7 915 user is sent first to a method that cannot verify them,
 * offered the fallback at half or the full moment by turns, and the health changes every few minutes
 * (on main: 58 of 58 users sent to the dead method first, 9 changes in the hour, only 4 or 5 of them
 * announced, as the 20-minute claims fall: a change repeated within the 20-minute claim of
 * `verification.method_health` is not, so the last event an operator sees may be `healthy` while the
 * method is degraded).
 *
 * Expected: a method whose every judged window on its own prefix dropped settles: degraded, then
 * demoted within the hour (20 minutes after its degradation, its retry aside), with a handful of
 * changes, each announced, whatever its country's other operators do (checked, with the country level
 * not judging a method its own prefix's window made unhealthy: degraded then demoted, 2 changes, 2
 * events, 41 of 58 users sent to the reverse call first). Medium (users' time on a dead method for
 * as long as the outage lasts; health events that never settle).
 */
import { describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { VerificationOpsEventName, type MethodHealthEvent } from '../../src/core/verification-events.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import {
  freshPhone,
  journeyFixture,
  journeyHost,
  sessionIds,
  start,
  switchMethod,
} from '../journeys/journey-host.js';
import { from, HOUR, seedFigures, storeOf } from '../journeys/figure-learning.js';

const MINUTE = 60_000;
/** Gaps between +7 915's users (mean 62.5 s): its window holds 19 or 20 outcomes by turns. */
const GAPS_S = [45, 80, 60, 75, 50, 70, 65, 55];
let otherSerial = 5000;
/** A +7 926 number (another operator of the same country). */
const otherPhone = () =>
  `+7926${String(process.pid % 1000).padStart(3, '0')}${String(++otherSerial).padStart(4, '0')}`;

describe.each(PLATFORMS)(
  'method health: an operator’s outage at the edge of its own window (%s)',
  (platform) => {
    const fx = journeyFixture();

    it('a reverse call failing every +7 915 user for an hour settles demoted, not flapping between levels', async () => {
      const host = await journeyHost(fx, platform, storeOf(platform), {}, { trustProxy: true });
      const stats = host.app.get(MethodStats, { strict: false });
      const account = host.app.get(VerificationAccountService, { strict: false });
      const events: string[] = [];
      host.app.get(EventEmitter2).on(VerificationOpsEventName.methodHealth, (event: MethodHealthEvent) => {
        if (event.method === 'reverse_flash_call' && event.prefix === '+7915')
          events.push(`${event.previous}>${event.state}@${event.level}`);
      });
      await seedFigures(fx, stats, 'sms', 'mobile', 400, 340, 40_000);
      await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 400, 320, 25_000);
      let users = 0;
      /** A +7 915 mobile user of `auto`, from a network of its own: it cannot complete the reverse call. */
      const user = async () => {
        users += 1;
        const owner = `user-${users}`;
        const ip = from(`${11 + Math.floor(users / 250)}.${users % 250}.3.1`);
        const phone = freshPhone();
        const res = await start(host, { phone_number: phone, method: 'auto', device: 'mobile' }, owner, ip);
        expect(res.status).toBe(201);
        const first = res.body.method as string;
        await fx.sb.advance(5_000);
        if (first !== 'sms')
          expect((await switchMethod(host, res.body.verification_id, 'sms', owner, ip)).status).toBe(201);
        const code = String(fx.sb.getSession(sessionIds(fx.sb, phone).at(-1)!)!.code);
        const check = { verification_id: res.body.verification_id, code };
        const proved = await call(host.url, 'POST', '/verification/check', check, { 'x-user': owner, ...ip });
        expect(proved.body.status).toBe('verified');
        await fx.sb.webhooksIdle();
        return first;
      };
      const health = () =>
        account.methodHealth().find((h) => h.method === 'reverse_flash_call' && h.prefix === '+7915')?.state;
      const firsts: string[] = [];
      const states: string[] = [];
      /** One gap: a +7 915 user at its start, +7 926's users (six a minute) through it. */
      const gap = async (seconds: number) => {
        const end = fx.sb.now() + seconds * 1000;
        firsts.push(await user());
        if (states.at(-1) !== health()) states.push(health()!);
        // Each completes the reverse call 5 s after its start: its outcome in the figures as its journey puts it.
        while (fx.sb.now() + 10_000 <= end) {
          await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 1, 1, 5_000, otherPhone);
          await fx.sb.advance(5_000);
        }
        await fx.sb.advance(end - fx.sb.now());
      };
      await fx.sb.advance(MINUTE - (fx.sb.now() % MINUTE));
      const outage = fx.sb.now();
      for (let i = 0; fx.sb.now() < outage + HOUR; i++) await gap(GAPS_S[i % GAPS_S.length]!);
      const seen = {
        users: firsts.length,
        deadFirst: firsts.filter((first) => first === 'reverse_flash_call').length,
        demoted: states.includes('demoted'),
        // Changes the users saw (the ops read at each start), and those `verification.method_health` announced.
        changes: states.length - 1,
        announced: events.length,
      };
      expect(seen).toEqual({
        ...seen,
        demoted: true,
        changes: Math.min(seen.changes, 4),
        announced: seen.changes,
      });
    }, 300_000);
  },
);
