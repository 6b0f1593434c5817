import { beforeEach, describe, expect, it } from '@jest/globals';
import type { SessionRecord } from '../core/session-record.js';
import type { MethodHealthEvent } from '../core/verification-events.js';
import { figureGivers } from '../verification/figure-givers.js';
import { methodStatsSuite, healthWatchOn } from '../../test/support/method-stats.fixture.js';
import { FOLLOWED_AFTER_MS } from './figure-evidence.js';
import { HEALTH_MIN_SESSIONS } from './method-health.js';
import { HEALTH_READ_MS, MethodHealthWatch } from './method-health.service.js';

/*
 * Attack 43/47 (fails on purpose on the code under attack): method health steered for everyone on an
 * operator prefix with free starts. Health judges a method's delivery as delivered ÷ started over
 * every admitted start, the `unproven` ones included (completion leaves them out, delivery does not).
 * Starts of the messenger bot cost nothing unless proved; 24 addresses in twelve /24s, each leaving
 * three bot starts on +7 985 that nobody opens (within the figures' day shares: 3 a caller, 5 an
 * address, 10 a network), degrade the bot there and then demote it: every +7 985 user of `auto` is
 * sent to it last, a paid method first. Nothing proved, nothing paid by the attacker.
 *
 * The reverse call's completion leaves such starts out (`unproven`), unless their caller has a
 * record: and a record comes from any verified session, a reverse call proved to the caller's own
 * number (0.25 RUB to the host, nothing to the attacker) included. 24 such addresses demote the
 * reverse call on +7 985 the same way: every user there is sent to SMS first.
 */

const fx = methodStatsSuite();
const { session } = fx;
let seq = 0;
const on985 = (): string => `+7985${String(++seq).padStart(7, '0')}`;

describe('method health and free starts nobody opens', () => {
  let watch: MethodHealthWatch;
  let events: MethodHealthEvent[];
  let userSeq = 0;
  let method: 'msgr2_bot' | 'reverse_flash_call' = 'msgr2_bot';

  beforeEach(() => {
    ({ watch, events } = healthWatchOn(fx));
  });

  /** One bot start from `ip` (caller `ip:<ip>`): verified, or left to expire (`delivered`: the bot sent the code). */
  async function call(
    phoneNumber: string,
    ip: string,
    verified: boolean,
    follow = false,
    delivered = verified,
  ): Promise<void> {
    const caller = `ip:${ip}`;
    const { address, network } = figureGivers(caller, ip);
    const givers = { ...(address ? { address } : {}), ...(network ? { network } : {}) };
    const record: SessionRecord = session({
      phoneNumber,
      method,
      awaitingCode: method !== 'reverse_flash_call',
      cost: undefined,
    });
    await fx.stats.tally(record, caller, 'mobile', givers);
    if (follow) await fx.stats.followed({ ...record, createdAt: fx.now - FOLLOWED_AFTER_MS });
    const end: Partial<SessionRecord> = verified
      ? {
          status: 'verified',
          verifiedAt: fx.now + 10_000,
          ...(method === 'msgr2_bot' ? { delivered: true } : {}),
        }
      : { status: 'expired', ...(delivered && method === 'msgr2_bot' ? { delivered: true } : {}) };
    await fx.stats.tally({ ...record, ...end }, caller, 'mobile', givers);
  }

  /** Real users on +7 985, each from a network of its own: 4 in 5 verify, 1 in 10 leaves after the code came. */
  async function realUsers(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      userSeq += 1;
      const ip = `${100 + (Math.floor(userSeq / 250) % 100)}.${userSeq % 250}.7.1`;
      await call(on985(), ip, userSeq % 5 !== 0, true, userSeq % 10 === 5);
    }
  }

  async function pass(ms: number, attack?: () => Promise<void>): Promise<void> {
    for (let t = 0; t < ms; t += HEALTH_READ_MS) {
      fx.now += HEALTH_READ_MS;
      await realUsers(1);
      if (attack) await attack();
      await watch.refresh(method, on985());
    }
  }

  it('24 addresses whose only record is one reverse call proved to their own number cannot degrade or demote the reverse call on +7 985', async () => {
    method = 'reverse_flash_call';
    await realUsers(10 * HEALTH_MIN_SESSIONS);
    await pass(60 * 60_000);
    expect(watch.state(method, on985())).toBe('healthy');

    // Each address proves one reverse call to its own number (0.25 RUB to the host): a figures record...
    const attackers = Array.from({ length: 24 }, (_, i) => `192.0.${10 + (i % 12)}.${20 + i}`);
    for (const ip of attackers) await call(`+7926${String(++seq).padStart(7, '0')}`, ip, true);
    // ...after which its abandoned reverse calls count as real users' failures (no page follows them).
    const left = attackers.flatMap((ip) => [ip, ip, ip]);
    await pass(50 * 60_000, async () => {
      const ip = left.shift();
      if (ip !== undefined) await call(on985(), ip, false);
    });
    expect(events.map((e) => `${e.previous}>${e.state}`)).toStrictEqual([]);
    expect(watch.state(method, on985())).toBe('healthy');
  });

  it('24 addresses leaving three free bot starts each cannot degrade or demote the bot on +7 985', async () => {
    method = 'msgr2_bot';
    // A normal week (an hour here): real users, 80 % completing.
    await realUsers(10 * HEALTH_MIN_SESSIONS);
    await pass(60 * 60_000);
    expect(watch.state(method, on985())).toBe('healthy');

    // The attacker: 24 addresses in 12 networks (/24), one bot start every 30 s, three each, nobody opens the bot.
    const attackers = Array.from({ length: 24 }, (_, i) => `192.0.${10 + (i % 12)}.${20 + i}`);
    const left = attackers.flatMap((ip) => [ip, ip, ip]);
    await pass(50 * 60_000, async () => {
      const ip = left.shift();
      if (ip !== undefined) await call(on985(), ip, false);
    });

    // Real users' completion and delivery never changed: the method is as healthy as it was.
    expect(events.map((e) => `${e.previous}>${e.state}`)).toStrictEqual([]);
    expect(watch.state(method, on985())).toBe('healthy');
  });
});
