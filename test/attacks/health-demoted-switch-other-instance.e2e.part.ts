/**
 * Attack (two instances, 90fea7ce): the reverse call is demoted on +7 915 (an outage instance A judged, the
 * deployment's change kept in the store). A user's journey starts on A (`auto`: SMS first, the reverse call
 * last); the load balancer sends its status polls and its switch to instance B, which has started no `auto`
 * journey on +7 915 since it booted. switchOrder reads the health "as this instance last read it": B never
 * read it, so the reverse call is healthy there, first by price, and the user's switch goes to the method
 * failing on their operator (a paid start of a dead method).
 *
 * Expected: B offers the reverse call last at the switch, as A does and as B's own start would (B's start
 * reads the kept change, health-instance-booted-in-outage): the switch goes elsewhere. And the failures of
 * the demoted method that B serves teach its health, not the figures `auto` chooses by, as on A.
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
import { from, outageUntil, outageUser, probeUser, seedFigures } from '../journeys/figure-learning.js';

describe.each(PLATFORMS)('method health: a switch served by another instance (%s)', (platform) => {
  const fx = journeyFixture();

  it('an auto journey started on A and switched on B is not sent to the method demoted on its prefix', async () => {
    const memory = platform === 'express' ? new MemoryStore({ clock: () => fx.sb.now() }) : undefined;
    const store = memory ?? { url: sharedRedisUrl(), keyPrefix: `atk210-sw-${process.pid}-${Date.now()}:` };
    try {
      const a = await journeyHost(fx, platform, { store }, {}, { trustProxy: true });
      const stats = a.app.get(MethodStats, { strict: false });
      await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 40_000);
      await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 25_000);
      expect((await probeUser(fx, a)).method).toBe('reverse_flash_call');
      await outageUntil(fx, a, 'demoted');
      const b = await secondInstance(fx, platform, { store });
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

  it('a named start of the demoted method served by B teaches its health cells only, not the choice’s', async () => {
    const memory = platform === 'express' ? new MemoryStore({ clock: () => fx.sb.now() }) : undefined;
    const store = memory ?? { url: sharedRedisUrl(), keyPrefix: `atk210-ch-${process.pid}-${Date.now()}:` };
    try {
      const a = await journeyHost(fx, platform, { store }, {}, { trustProxy: true });
      const stats = a.app.get(MethodStats, { strict: false });
      await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 40_000);
      await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 25_000);
      await probeUser(fx, a);
      await outageUntil(fx, a, 'demoted');
      const b = await secondInstance(fx, platform, { store });
      // Read on the instance that served them: its reads wait for its own counts.
      const started = async (host: TestApp) =>
        (
          await host.app
            .get(MethodStats, { strict: false })
            .cellSums('reverse_flash_call', choiceCells(freshPhone(), 'mobile'), 7)
        ).map((cell) => cell.started);
      const before = await started(a);
      // Its users' named starts of the reverse call, served by B, which never read +7 915's health.
      for (let i = 0; i < 3; i++) await outageUser(fx, b, 1000 + i);
      expect(await started(b)).toEqual(before);
    } finally {
      await Promise.all(fx.hosts.splice(0).map((host) => host.close()));
      memory?.close();
    }
  }, 180_000);

  // The same read for the fallback moment: a degraded method falls back at half its moment, on every instance.
  it('a journey on a method degraded on its prefix is offered its fallback as soon on B as on A', async () => {
    const memory = platform === 'express' ? new MemoryStore({ clock: () => fx.sb.now() }) : undefined;
    const store = memory ?? { url: sharedRedisUrl(), keyPrefix: `atk210-fb-${process.pid}-${Date.now()}:` };
    try {
      const a = await journeyHost(fx, platform, { store }, {}, { trustProxy: true });
      const stats = a.app.get(MethodStats, { strict: false });
      await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 40_000);
      await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 25_000);
      expect((await probeUser(fx, a)).method).toBe('reverse_flash_call');
      await outageUntil(fx, a, 'degraded');
      const b = await secondInstance(fx, platform, { store });
      const call = { phone_number: freshPhone(), method: 'reverse_flash_call', device: 'mobile' };
      const started = await start(a, call, 'u-f');
      expect(started.status).toBe(201);
      const fallbackOn = async (host: TestApp) =>
        (await status(host, started.body.verification_id, 'u-f')).body.fallback_available_at;
      expect(await fallbackOn(b)).toBe(await fallbackOn(a));
    } finally {
      await Promise.all(fx.hosts.splice(0).map((host) => host.close()));
      memory?.close();
    }
  }, 180_000);
});
