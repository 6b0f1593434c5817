import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { VerificationAccountService } from '../account/verification-account.service.js';
import type { VerificationLedger } from '../ledger/verification-ledger.service.js';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { MemoryStore } from '../store/memory.store.js';
import { NOON } from '../../test/support/method-stats.fixture.js';
import { VerificationOpsPage } from './verification-ops-page.service.js';

let now = NOON;

describe('VerificationOpsPage', () => {
  let store: MemoryStore;
  let emitter: EventEmitter2;
  let page: VerificationOpsPage;
  beforeEach(() => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
    emitter = new EventEmitter2();
    const options = resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
      clock: () => now,
      name: 'brand-b',
    });
    const ledger = { enabled: false } as VerificationLedger;
    const account = { methodStats: async () => ({}) } as unknown as VerificationAccountService;
    page = new VerificationOpsPage(options, store, ledger, account, emitter);
    page.onModuleInit();
  });
  afterEach(() => {
    page.onModuleDestroy();
    store.close();
  });

  it('counts its own registration’s events per day, not another’s, and stops at destroy', async () => {
    await emitter.emitAsync('verification.fraud_suspected', { registration: 'brand-b' });
    await emitter.emitAsync('verification.fraud_suspected', { registration: 'brand-a' });
    await emitter.emitAsync('verification.fraud_suspected', {});
    await emitter.emitAsync('verification.spend_cap_reached', { registration: 'brand-b' });
    expect((await page.data('2026-03-15')).incidents).toStrictEqual([
      { event: 'verification.fraud_suspected', count: 1 },
      { event: 'verification.spend_cap_reached', count: 1 },
    ]);
    now += 86_400_000;
    await emitter.emitAsync('verification.ledger_drift', { registration: 'brand-b' });
    expect((await page.data('2026-03-16')).incidents).toStrictEqual([
      { event: 'verification.ledger_drift', count: 1 },
    ]);
    page.onModuleDestroy();
    await emitter.emitAsync('verification.ledger_drift', { registration: 'brand-b' });
    expect((await page.data('2026-03-16')).incidents).toStrictEqual([
      { event: 'verification.ledger_drift', count: 1 },
    ]);
  });

  it("the unnamed registration's page counts its own events, never a named registration's", async () => {
    const own = new MemoryStore({ clock: () => now });
    const options = resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
      clock: () => now,
    });
    const ledger = { enabled: false } as VerificationLedger;
    const account = { methodStats: async () => ({}) } as unknown as VerificationAccountService;
    const unnamed = new VerificationOpsPage(options, own, ledger, account, emitter);
    unnamed.onModuleInit();
    await emitter.emitAsync('verification.fraud_suspected', { registration: 'brand-b' });
    await emitter.emitAsync('verification.spend_cap_reached', { registration: 'brand-b' });
    await emitter.emitAsync('verification.spend_cap_reached', {});
    expect((await unnamed.data('2026-03-15')).incidents).toStrictEqual([
      { event: 'verification.spend_cap_reached', count: 1 },
    ]);
    unnamed.onModuleDestroy();
    await own.close();
  });

  it("yesterday's page shows its incidents all of today: one at yesterday's first millisecond, read at today's last", async () => {
    now = Date.UTC(2026, 2, 16);
    await emitter.emitAsync('verification.balance_low', { registration: 'brand-b' });
    now = Date.UTC(2026, 2, 18) - 1;
    expect((await page.data('2026-03-16')).incidents).toStrictEqual([
      { event: 'verification.balance_low', count: 1 },
    ]);
    expect(await page.render({ date: '2026-03-16' })).toContain('2026-03-16');
  });

  it('today is the default day; a later one, another language or the CSV of an off ledger are refused', async () => {
    expect(await page.render()).toContain('2026-03-15');
    expect(await page.render({ date: '2026-03-15', lang: 'ru' })).toContain('<html lang="ru">');
    await expect(page.render({ date: '2026-03-16' })).rejects.toMatchObject({
      detail: 'date is after today',
    });
    await expect(page.render({ lang: 'EN' })).rejects.toMatchObject({ detail: 'lang must be one of en, ru' });
    for (const query of [null, 'lang=ru'])
      await expect(page.render(query as never)).rejects.toMatchObject({
        detail: 'query must be lang and date',
        extra: { errors: [{ field: 'query' }] },
      });
    await expect(page.csv({})).rejects.toMatchObject({
      detail: 'the ledger is off',
      extra: { errors: [{ field: 'date' }] },
    });
    await expect(page.render({ evil: '1' } as never)).rejects.toMatchObject({
      detail: 'evil is not a field of this page (lang, date)',
      extra: { errors: [{ field: 'evil' }] },
    });
    await expect(page.csv({ date: '2026-02-31' })).rejects.toMatchObject({
      detail: 'date must be a date like 2026-01-31',
      extra: { errors: [{ field: 'date' }] },
    });
  });

  it("shows each method's health as the account's figures give it, a rate unknown as none", async () => {
    // The last day's figures: what the account gives for `days: 1`.
    const account = {
      methodStats: async ({ days }: { days?: number }) =>
        days === 1 ? { sms: { started: 4, verifiedRate: 0.5 }, flash_call: { started: 1 } } : {},
    } as unknown as VerificationAccountService;
    const options = resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
      clock: () => now,
    });
    // A host without EventEmitterModule: the page boots and stops, and counts nothing.
    const quiet = new VerificationOpsPage(options, store, { enabled: false } as VerificationLedger, account);
    quiet.onModuleInit();
    expect((await quiet.data('2026-03-15')).health).toStrictEqual([
      { method: 'sms', started: 4, verifiedRate: 0.5 },
      { method: 'flash_call', started: 1, verifiedRate: null },
    ]);
    quiet.onModuleDestroy();
  });
});
