/**
 * Attack (MethodHealthWatch.counted, 19a39070 + 826c624b): a start of a method demoted on its prefix counts in
 * health's cells only, "as this instance last read it, else the change the deployment kept". An instance that
 * tracks the prefix answers its own last read however old it is: `counted` reads the kept change only for a
 * prefix the instance never read, and nothing but an `auto` start there (FirstMethodChooser's refresh) reads it
 * again. Instance B served one `auto` start on +7 915 while the reverse call was healthy; A then judged the
 * outage and kept the demotion. The outage's users' named starts of the reverse call (and their switches, which
 * read `known`, as last read) are served by B: B still holds "healthy", its read many HEALTH_READ_MS old, and
 * counts the outage's failures in the cells `auto` chooses by, on every instance, as before the fix.
 *
 * The same stale read steers a switch (`known`, 90fea7ce): a journey started on A, its poll and switch served
 * by B, is offered the demoted reverse call first on B (last on A) and switched to it (a paid start of a dead
 * method).
 *
 * Expected: as on an instance that never read the prefix, B's named starts of the demoted method leave the
 * choice cells' starts as they were, and B offers the demoted method last at a switch, as A does.
 */
import { describe, expect, it } from '@jest/globals';
import { choiceCells } from '../../src/account/method-figures.js';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import {
  freshPhone,
  journeyFixture,
  journeyHost,
  secondInstance,
  start,
  status,
  switchMethod,
} from '../journeys/journey-host.js';
import {
  from,
  outageUntil,
  outageUser,
  probeUser,
  reverseCallHealth,
  seedFigures,
} from '../journeys/figure-learning.js';

describe.each(PLATFORMS)(
  'method health: an instance whose own read of the prefix is stale (%s)',
  (platform) => {
    const fx = journeyFixture();

    it('a named start of the demoted method served by B, which read the prefix healthy long ago, teaches its health cells only', async () => {
      const memory = platform === 'express' ? new MemoryStore({ clock: () => fx.sb.now() }) : undefined;
      const store = memory ?? { url: sharedRedisUrl(), keyPrefix: `atk218-st-${process.pid}-${Date.now()}:` };
      try {
        const a = await journeyHost(fx, platform, { store }, {}, { trustProxy: true });
        const stats = a.app.get(MethodStats, { strict: false });
        await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 40_000);
        await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 25_000);
        const b = await secondInstance(fx, platform, { store });
        // B reads +7 915 once, healthy: one auto start there.
        expect((await probeUser(fx, b)).method).toBe('reverse_flash_call');
        expect(reverseCallHealth(b)).toEqual(['healthy']);
        await probeUser(fx, a);
        await outageUntil(fx, a, 'demoted');
        // Read on the instance that served them: its reads wait for its own counts.
        const started = async (host: TestApp) =>
          (
            await host.app
              .get(MethodStats, { strict: false })
              .cellSums('reverse_flash_call', choiceCells(freshPhone(), 'mobile'), 7)
          ).map((cell) => cell.started);
        // B's probe start was counted in B, where its count waits for B's next flush (a timer, real time): in
        // the store before the reading, or it lands between the two reads as if B had counted an outage start.
        await b.app.get(MethodStats, { strict: false }).flush();
        const before = await started(a);
        // B's own read, minutes old, still says healthy.
        expect(reverseCallHealth(b)).toEqual(['healthy']);
        // The outage's users' named starts of the reverse call, served by B.
        for (let i = 0; i < 3; i++) await outageUser(fx, b, 1000 + i);
        expect(await started(b)).toEqual(before);
      } finally {
        await Promise.all(fx.hosts.splice(0).map((host) => host.close()));
        memory?.close();
      }
    }, 180_000);

    it('an auto journey started on A and switched on B, which read the prefix healthy long ago, is not sent to the demoted method', async () => {
      const memory = platform === 'express' ? new MemoryStore({ clock: () => fx.sb.now() }) : undefined;
      const store = memory ?? { url: sharedRedisUrl(), keyPrefix: `atk218-sw-${process.pid}-${Date.now()}:` };
      try {
        const a = await journeyHost(fx, platform, { store }, {}, { trustProxy: true });
        const stats = a.app.get(MethodStats, { strict: false });
        await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 40_000);
        await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 25_000);
        const b = await secondInstance(fx, platform, { store });
        // B reads +7 915 once, healthy: one auto start there.
        expect((await probeUser(fx, b)).method).toBe('reverse_flash_call');
        expect((await probeUser(fx, a)).method).toBe('reverse_flash_call');
        await outageUntil(fx, a, 'demoted');
        // The user starts on A: SMS first, the reverse call offered last.
        const ip = from('198.51.100.7');
        const started = await start(
          a,
          { phone_number: freshPhone(), method: 'auto', device: 'mobile' },
          'u-b',
          ip,
        );
        expect(started.body.method).toBe('sms');
        const onA = (await status(a, started.body.verification_id, 'u-b')).body.switch_methods as string[];
        expect(onA.at(-1)).toBe('reverse_flash_call');
        // Its next poll and its switch land on B.
        const onB = (await status(b, started.body.verification_id, 'u-b')).body.switch_methods as string[];
        expect(onB).toEqual(onA);
        const switched = await switchMethod(b, started.body.verification_id, undefined, 'u-b', ip);
        expect(switched.status).toBe(201);
        expect(switched.body.method).not.toBe('reverse_flash_call');
      } finally {
        await Promise.all(fx.hosts.splice(0).map((host) => host.close()));
        memory?.close();
      }
    }, 180_000);
  },
);
