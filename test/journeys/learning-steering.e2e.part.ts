/**
 * What `auto` learns cannot be steered from outside (issue 47; issue 43, finding 6): free
 * reverse-call starts nobody completes, from many addresses, move neither the learned fallback
 * moment of legitimate users nor the method order of `cost_per_success`. The figures learn from
 * evidence of real users (a page that followed the status, a caller with a record, a verified
 * journey), each caller, address and network counting a bounded share of a day. Express on a
 * MemoryStore, Fastify on Redis.
 */
import { describe, expect, it } from '@jest/globals';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { FIGURES_SHARE_PER_DAY } from '../../src/account/figure-evidence.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { PLATFORMS } from '../support/verification-app.js';
import {
  EXPIRY_MS,
  from,
  realUsers,
  abandonedStarts,
  storeOf,
  taughtHost,
  expectMomentHeld,
} from './figure-learning.js';
import { freshPhone, journeyFixture, journeyHost, start } from './journey-host.js';

describe.each(PLATFORMS)('learning nobody can steer (%s)', (platform) => {
  const fx = journeyFixture();

  it('150 free reverse-call starts nobody completes leave the legitimate users’ fallback moment where it was', async () => {
    const { host, before } = await taughtHost(fx, platform);

    // 150 addresses in 150 networks, one abandoned start each; they expire unverified.
    await abandonedStarts(fx, host, 150, (i) => `203.${i}.7.1`);
    await fx.sb.advance(EXPIRY_MS);
    await fx.sb.webhooksIdle();
    await expectMomentHeld(fx, host, before);

    // The same bot polling the status, from one network: that network counts ten starts a day.
    await abandonedStarts(fx, host, 150, (i) => `203.0.113.${i}`, true);
    await fx.sb.advance(EXPIRY_MS);
    await fx.sb.webhooksIdle();
    await expectMomentHeld(fx, host, before);
  }, 120_000);

  it('600 addresses of abandoned free starts do not move the method order of cost_per_success', async () => {
    const host = await journeyHost(
      fx,
      platform,
      {
        orchestration: { mode: 'cost_per_success', minSamples: 10, minCallers: 5, fallback: false },
        ...storeOf(platform),
      },
      {},
      { trustProxy: true },
    );
    // Reverse call 0.25 RUB, 15 of 20 verified; flash call 0.80 RUB, 15 of 20: the reverse call first.
    await realUsers(fx, host, 'reverse_flash_call', 61);
    await realUsers(fx, host, 'flash_call', 62);
    const auto = async () => {
      await fx.sb.advance(10 * 60_000); // pricesTtlMs: the figures are read again
      const res = await start(host, { phone_number: freshPhone() }, 'someone', from('192.0.2.2'));
      expect(res.status).toBe(201);
      return res.body.method;
    };
    expect(await auto()).toBe('reverse_flash_call');

    await abandonedStarts(fx, host, 600, (i) => `100.${64 + (i >> 8)}.${i & 255}.9`);
    // While they are pending, and once they have expired.
    expect(await auto()).toBe('reverse_flash_call');
    await fx.sb.advance(EXPIRY_MS);
    await fx.sb.webhooksIdle();
    expect(await auto()).toBe('reverse_flash_call');

    // The same botnet with a page following each status (a poll costs nothing): 600 more, in 600
    // other networks. A free method's unverified end from a giver who proved no number teaches nothing.
    await abandonedStarts(fx, host, 600, (i) => `100.${80 + (i >> 8)}.${i & 255}.9`, true);
    expect(await auto()).toBe('reverse_flash_call');
    await fx.sb.advance(EXPIRY_MS);
    await fx.sb.webhooksIdle();
    expect(await auto()).toBe('reverse_flash_call');
  }, 180_000);

  it.each([
    ['a signed-in account is one giver wherever it signs in from', 'farm', FIGURES_SHARE_PER_DAY.caller],
    ['anonymous visitors are each a giver of their own', null, 8],
  ])('%s: of 8 starts from 8 networks, the figures count its share', async (_, owner, counted) => {
    const host = await journeyHost(fx, platform, storeOf(platform), {}, { trustProxy: true });
    const stats = host.app.get(MethodStats, { strict: false });
    // Each address within its own share and its network's: only the caller's share can bound them.
    await abandonedStarts(fx, host, 8, (i) => `100.${96 + i}.1.9`, false, owner);
    await fx.sb.advance(EXPIRY_MS);
    await fx.sb.webhooksIdle();
    expect((await stats.figures()).reverse_flash_call).toMatchObject({ started: counted });
  });

  it('each account and each anonymous visitor is one caller in the figures: 2 accounts and 2 visitors, 4 callers', async () => {
    const host = await journeyHost(fx, platform, storeOf(platform), {}, { trustProxy: true });
    const stats = host.app.get(MethodStats, { strict: false });
    const owners = ['ann', 'ann', 'ben', 'ben', null, null];
    for (const [i, owner] of owners.entries())
      await abandonedStarts(fx, host, 1, () => `100.${112 + i}.1.9`, false, owner);
    expect((await stats.figures()).reverse_flash_call).toMatchObject({ started: 6, callers: 4 });
  });

  it("one address is one giver whoever signs in from it: of 6 accounts' starts from one address, the figures count its share", async () => {
    const host = await journeyHost(fx, platform, storeOf(platform), {}, { trustProxy: true });
    const stats = host.app.get(MethodStats, { strict: false });
    for (let i = 0; i < 6; i++)
      await abandonedStarts(fx, host, 1, () => '100.120.1.9', false, `account-${i}`);
    expect((await stats.figures()).reverse_flash_call).toMatchObject({
      started: FIGURES_SHARE_PER_DAY.address,
    });
  });

  it("the host's own starts (no client, no owner) are no caller: each counted, none bounded by a caller's share", async () => {
    const host = await journeyHost(fx, platform, storeOf(platform));
    const stats = host.app.get(MethodStats, { strict: false });
    const verification = host.app.get(VerificationService, { strict: false });
    for (let i = 0; i < FIGURES_SHARE_PER_DAY.caller + 1; i++)
      await verification.start({ phoneNumber: freshPhone(), method: 'reverse_flash_call' });
    expect((await stats.figures()).reverse_flash_call).toMatchObject({
      started: FIGURES_SHARE_PER_DAY.caller + 1,
      callers: 0,
    });
  });
});
