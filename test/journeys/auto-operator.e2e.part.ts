/**
 * Issue 47: `auto`'s default (`mode: 'cost_and_time'`) chooses the first method per operator prefix and
 * device from the method figures: a desktop user is not first sent to what desktop users rarely
 * complete, a mobile user gets the cheaper method that verifies as many as SMS, no slower. Over HTTP, on
 * Express and Fastify; the figures are the module's own, counted as its sessions end.
 */
import { describe, expect, it } from '@jest/globals';
import { jest } from '@jest/globals';
import { MethodHealthWatch } from '../../src/account/method-health.service.js';
import type { HealthState } from '../../src/account/method-health.js';
import { MethodStats } from '../../src/account/method-stats.service.js';
import {
  FIRST_METHOD_MIN_TTL_MS,
  FIRST_METHOD_SETTLED_ENDED,
  FIRST_METHOD_TTL_MS,
} from '../../src/verification/first-method.chooser.js';
import { PLATFORMS } from '../support/verification-app.js';
import { seedFigures } from './figure-learning.js';
import { freshPhone, journeyFixture, journeyHost, start, status, switchMethod } from './journey-host.js';

describe.each(PLATFORMS)('journeys: auto by operator and device (%s)', (platform) => {
  const fx = journeyFixture();

  it('sends desktop users to SMS and mobile users to the reverse call, from the operator figures', async () => {
    const host = await journeyHost(fx, platform);
    // Before any figures: the price order (the reverse call, cheapest), but a desktop page does not
    // start with a call dialled by hand: the next method (unchosenOrder).
    expect((await start(host, { phone_number: freshPhone(), device: 'mobile' })).body.method).toBe(
      'reverse_flash_call',
    );
    expect((await start(host, { phone_number: freshPhone(), device: 'desktop' })).body.method).toBe(
      'flash_call',
    );
    const stats = host.app.get(MethodStats, { strict: false });
    await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 20_000);
    await seedFigures(fx, stats, 'sms', 'desktop', 40, 34, 20_000);
    // Only proved calls rank a method charged on proof (an abandoned one proves nothing): 32 of 40.
    await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 10_000);
    // Desktop users seldom place the call: 4 in 40.
    await seedFigures(fx, stats, 'reverse_flash_call', 'desktop', 40, 4, 30_000);
    // A choice made on no figures stands FIRST_METHOD_MIN_TTL_MS (module clock): one ms before, the order without a choice still.
    await fx.sb.advance(FIRST_METHOD_MIN_TTL_MS - 1);
    expect((await start(host, { phone_number: freshPhone(), device: 'desktop' })).body.method).toBe(
      'flash_call',
    );
    await fx.sb.advance(1);

    const desktop = await start(host, { phone_number: freshPhone(), method: 'auto', device: 'desktop' });
    expect(desktop.status).toBe(201);
    expect(desktop.body.method).toBe('sms');
    // The switches follow the price order, the reverse call among them.
    const journey = await status(host, desktop.body.verification_id);
    expect(journey.body.switch_methods).toContain('reverse_flash_call');
    const mobile = await start(host, { phone_number: freshPhone(), method: 'auto', device: 'mobile' });
    expect(mobile.body.method).toBe('reverse_flash_call');
    // An explicit method is the caller's: the figures never override it.
    const explicit = await start(host, {
      phone_number: freshPhone(),
      method: 'reverse_flash_call',
      device: 'desktop',
    });
    expect(explicit.body.method).toBe('reverse_flash_call');
  });

  it('a choice on thin figures is made again as they grow: its life in proportion to the ended sessions behind it', async () => {
    const host = await journeyHost(fx, platform);
    const stats = host.app.get(MethodStats, { strict: false });
    // The thinnest device, desktop: 40 SMS sessions (its 4 proved calls are too few to count). The
    // choice (desktop: SMS) stands 40 ÷ 300 of FIRST_METHOD_TTL_MS.
    await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 20_000);
    await seedFigures(fx, stats, 'sms', 'desktop', 40, 34, 20_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 10_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'desktop', 40, 4, 30_000);
    const desktopFirst = async () =>
      (await start(host, { phone_number: freshPhone(), method: 'auto', device: 'desktop' })).body.method;
    expect(await desktopFirst()).toBe('sms');
    // Desktop users now complete the reverse call, fast: 160 more, 150 verified within 10 s.
    await seedFigures(fx, stats, 'reverse_flash_call', 'desktop', 160, 150, 10_000);
    const life = (FIRST_METHOD_TTL_MS * 40) / FIRST_METHOD_SETTLED_ENDED;
    await fx.sb.advance(life - 1);
    expect(await desktopFirst()).toBe('sms');
    await fx.sb.advance(1);
    expect(await desktopFirst()).toBe('reverse_flash_call');
  });

  it('without SMS figures, sends desktop users past a reverse call they rarely complete', async () => {
    const host = await journeyHost(fx, platform);
    const stats = host.app.get(MethodStats, { strict: false });
    // SMS is never tried (the journeys end before it): the flash call, most completed, stands in for it.
    await seedFigures(fx, stats, 'flash_call', 'mobile', 40, 29, 20_000);
    await seedFigures(fx, stats, 'flash_call', 'desktop', 40, 29, 20_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 10_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'desktop', 40, 4, 30_000);
    await fx.sb.advance(FIRST_METHOD_TTL_MS);
    const desktop = await start(host, { phone_number: freshPhone(), method: 'auto', device: 'desktop' });
    expect(desktop.status).toBe(201);
    expect(desktop.body.method).toBe('flash_call');
    const mobile = await start(host, { phone_number: freshPhone(), method: 'auto', device: 'mobile' });
    expect(mobile.body.method).toBe('reverse_flash_call');
  });

  it('each purpose gets a method it offers: a choice made for one purpose is not handed to another', async () => {
    const host = await journeyHost(fx, platform, {
      purposes: {
        login: { methods: ['sms', 'reverse_flash_call'] },
        change_phone: { methods: ['reverse_flash_call', 'flash_call'] },
      },
    });
    const stats = host.app.get(MethodStats, { strict: false });
    await seedFigures(fx, stats, 'sms', 'desktop', 40, 34, 20_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'desktop', 40, 4, 30_000);
    const auto = (purpose: string) =>
      start(host, { phone_number: freshPhone(), method: 'auto', device: 'desktop', purpose });
    // The figures put SMS first for desktop users on this operator prefix, where it is offered...
    const login = await auto('login');
    expect(login.status).toBe(201);
    expect(login.body.method).toBe('sms');
    // ...and, within that choice's life, a purpose that does not offer SMS starts one it offers.
    const change = await auto('change_phone');
    expect(change.status).toBe(201);
    expect(['reverse_flash_call', 'flash_call']).toContain(change.body.method);
  });

  it("mode 'price' keeps the price order for every device, whatever the figures", async () => {
    const host = await journeyHost(fx, platform, { orchestration: { mode: 'price' } });
    const stats = host.app.get(MethodStats, { strict: false });
    await seedFigures(fx, stats, 'sms', 'desktop', 40, 34, 20_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'desktop', 40, 4, 30_000);
    await fx.sb.advance(FIRST_METHOD_TTL_MS);
    const desktop = await start(host, { phone_number: freshPhone(), device: 'desktop' });
    expect(desktop.body.method).toBe('reverse_flash_call');
  });

  it("a method demoted on the number's prefix is offered last by its switches, as by its start; on another prefix it keeps its place", async () => {
    const host = await journeyHost(fx, platform);
    // The reverse call demoted on +7 915 (the health as this instance read it), healthy elsewhere.
    const health = host.app.get(MethodHealthWatch, { strict: false });
    const of = (method: string, phone: string): HealthState =>
      method === 'reverse_flash_call' && phone.startsWith('+7915') ? 'demoted' : 'healthy';
    jest.spyOn(health, 'state').mockImplementation(of);
    jest.spyOn(health, 'refresh').mockImplementation((method, phone) => Promise.resolve(of(method, phone)));
    const demoted = await start(host, { phone_number: freshPhone(), method: 'auto', device: 'mobile' });
    expect(demoted.body.method).toBe('flash_call');
    // The price order, the reverse call moved from first to last.
    const priceOrder = ['msgr1_otp', 'msgr2_bot', 'operator_id', 'sms'];
    expect((await status(host, demoted.body.verification_id)).body.switch_methods).toEqual([
      ...priceOrder,
      'reverse_flash_call',
    ]);
    const switched = await switchMethod(host, demoted.body.verification_id);
    expect(switched.status).toBe(201);
    expect(switched.body.method).toBe('msgr1_otp');
    // +7 926: the price order stands.
    const other = await start(host, { phone_number: '+79261234567', method: 'auto', device: 'mobile' });
    expect(other.body.method).toBe('reverse_flash_call');
    expect((await status(host, other.body.verification_id)).body.switch_methods).toEqual([
      'flash_call',
      ...priceOrder,
    ]);
  });
});
