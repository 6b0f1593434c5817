/**
 * Attack on the per-registration usage reconcile (aced72cb): two named registrations on ONE API account
 * (two brands' routes billed to one account), one Redis and one `keyPrefix` the host chose: the spend cap is
 * one pooled counter. Each registration compares only what it counted itself with the account's usage, which
 * holds both registrations' charges. South's SMS were delivered and charged; north's went undelivered (not
 * charged, ended unproven). When the pooled cap is full, north's read sees south's charges as its own
 * account's and gives nothing back (or counts them twice): the host is refused at half the cap it pays for.
 *
 * Expected: what the account did not charge comes back; a start then goes out; the account pays at most the cap.
 * The same for one registration booted again under another name on the same prefix and account (its figures were
 * its old name's: the new name's read found none of them and gave nothing back). Each with the data key the API
 * secret gives and with a `dataKey` of each registration's own (a rotation between boots): the figures are the
 * account's, whatever seals the host's data.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { VerificationModule } from '../../src/module/verification.module.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { DAY_MS, toJustPast } from '../support/utc-bounds.js';
import { call, createTestApp, ONE_PLATFORM } from '../support/verification-app.js';
import { capRegistration, startOn } from './spend-cap-registrations.js';

/** The data key shapes: none (derived from the API secret), or each registration's own. */
const DATA_KEYS = [
  ['the data key of the API secret', (): { dataKey?: string } => ({})],
  ['a data key of its own', (): { dataKey?: string } => ({ dataKey: randomBytes(32).toString('hex') })],
] as const;

describe.each(DATA_KEYS)(
  'a spend cap two registrations of one account pool, reconciled with that account’s usage (%s)',
  (_shape, dataKey) => {
    const suite = sandboxSuite({ freezeClock: false });

    it('gives back what the shared account did not charge: the host spends up to its cap, not half of it', async () => {
      const sb = suite.sb;
      await sb.advance(toJustPast(sb.now(), DAY_MS));
      const tag = randomUUID().slice(0, 8);
      const names = [`north${tag}`, `south${tag}`] as const;
      const keyPrefix = `pv-shared:${randomUUID()}:`;
      const account = await sb.createAccount({ balance: 1_000 });
      const delivering = (rate: number) => smsDelivered(sb, account.apiKey, rate);
      const registrations = names.map((name) => ({
        ...capRegistration(sb, account, name, keyPrefix),
        ...dataKey(),
      }));
      const [first, ...others] = registrations.map((options) => VerificationModule.forRoot(options));
      suite.host = await createTestApp({ platform: ONE_PLATFORM[0]!, module: first!, imports: others });
      const host = suite.host;
      const [north, south] = names;
      const start = (name: string) => startOn(host.url, name);
      const balance = (): number => sb.getAccount(account.apiKey)!.balance.amount;
      const before = balance();
      const fiveEnded = (name: string) => endFive(sb, start, host.url, name);

      // 1. South's five SMS delivered (charged, 15 RUB); north's five undelivered (not charged): the cap is full.
      await delivering(1);
      await fiveEnded(south);
      await delivering(0);
      await fiveEnded(north);
      expect(Math.round((before - balance()) * 100) / 100).toBe(15);

      // 2. The account paid 15 of its 30 RUB: north's 15 unproven come back, and north starts again.
      await sb.advance(31_000);
      const again = await start(north);
      expect({ status: again.status, error_code: again.body.error_code }).toEqual({
        status: 201,
        error_code: undefined,
      });
      // Five more fit; the account never pays past its cap.
      await delivering(1);
      let sent = 1;
      for (let i = 0; i < 8; i++) if ((await start(north)).status === 201) sent += 1;
      await sb.advance(2_000);
      expect(sent).toBe(5);
      expect(Math.round((before - balance()) * 100) / 100).toBeLessThanOrEqual(30);
    });
    it('a registration renamed between boots on the same account keeps its figures: what the account did not charge comes back', async () => {
      const sb = suite.sb;
      await sb.advance(toJustPast(sb.now(), DAY_MS));
      const tag = randomUUID().slice(0, 8);
      const keyPrefix = `pv-shared:${randomUUID()}:`;
      const account = await sb.createAccount({ balance: 1_000 });
      const delivering = (rate: number) => smsDelivered(sb, account.apiKey, rate);
      const boot = (name: string) =>
        suite.boot({
          platform: ONE_PLATFORM[0]!,
          module: VerificationModule.forRoot({
            ...capRegistration(sb, account, name, keyPrefix),
            ...dataKey(),
          }),
        });
      const start = startOn;
      const balance = (): number => sb.getAccount(account.apiKey)!.balance.amount;
      const before = balance();

      // 1. Under its first name: five SMS undelivered (not charged), five delivered (15 RUB): the cap is full.
      const old = await boot(`brand${tag}`);
      for (const rate of [0, 1]) {
        await delivering(rate);
        await endFive(sb, (name) => start(old.url, name), old.url, `brand${tag}`);
      }
      expect(Math.round((before - balance()) * 100) / 100).toBe(15);
      await old.close();

      // 2. Booted again under another name: the 15 RUB the account did not charge come back.
      const renamed = await boot(`retail${tag}`);
      await sb.advance(31_000);
      const again = await start(renamed.url, `retail${tag}`);
      expect({ status: again.status, error_code: again.body.error_code }).toEqual({
        status: 201,
        error_code: undefined,
      });
    });
  },
);

/** The account's SMS delivered at `deliveryRate` (charged on delivery), in about a second, never completed. */
function smsDelivered(sb: VerificationSandbox, apiKey: string, deliveryRate: number) {
  return sb.updateAccount(apiKey, {
    population: { methods: { sms: { deliveryRate, deliveryTime: { medianMs: 1_000 }, completionRate: 0 } } },
  });
}

/** Five SMS started under `name` and read until they expired (their figures settled). */
async function endFive(
  sb: { advance(ms: number): Promise<unknown> },
  start: (name: string) => Promise<{ status: number; body: Record<string, unknown> }>,
  url: string,
  name: string,
): Promise<void> {
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await start(name);
    expect(r.status).toBe(201);
    ids.push(String(r.body.verification_id));
  }
  await sb.advance(2_000);
  await sb.advance(6 * 60_000);
  for (const id of ids) {
    let status: unknown;
    for (let read = 0; read < 20 && status !== 'expired'; read++) {
      status = (await call(url, 'GET', `/${name}/verification/status/${id}`)).body.status;
      if (status !== 'expired') await sb.advance(3_000);
    }
    expect(status).toBe('expired');
  }
}
