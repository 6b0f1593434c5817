/**
 * VerificationErasure: a deletion request for a number or an owner, made on one instance, removes
 * what every instance sharing the store keeps about that subject (sessions, journeys, history,
 * the subject's counters); its handles answer 404 and its claims no longer open the guard; others are
 * untouched. An owner's entries in the number's history stay, without the owner. Nothing of the subject
 * remains in a store dump but the keyed erasure mark the claims are refused by and a number's limits.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationClientError } from '../../src/core/verification.errors.js';
import type { DataKeys } from '../../src/core/data-keys.js';
import { VerifiedPhoneClaims } from '../../src/guard/verified-phone-claims.js';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../../src/options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreOption } from '../../src/store/create-store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { dumpMemoryStore, dumpRedisPrefix, isErasureIndexCounter } from '../support/store-dump.js';
import { call, createTestApp, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

let serial = 0;
const phone = () =>
  `+7916${String(process.pid % 1000).padStart(3, '0')}${String(7000 + ++serial).padStart(4, '0')}`;

describe('erasure of a number or an owner', () => {
  const suite = sandboxSuite();
  const hosts: TestApp[] = [];
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.close();
  });

  async function boot(store: StoreOption): Promise<TestApp> {
    const host = await createTestApp({
      platform: 'express',
      module: moduleOptions(suite.sb, { store, history: {}, limits: { spendCap: false } }),
    });
    hosts.push(host);
    return host;
  }
  const keysOf = (host: TestApp): DataKeys =>
    host.app.get<ResolvedVerificationOptions>(RESOLVED_VERIFICATION_OPTIONS, { strict: false }).dataKeys;

  /** A verified sms session and a pending flash call of one number and owner; returns their ids. */
  async function verifyAndLeavePending(host: TestApp, n: string, owner: string): Promise<string[]> {
    const post = (path: string, body: unknown) =>
      call(host.url, 'POST', `/verification/${path}`, body, { 'x-user': owner });
    const started = await post('start', { phone_number: n, method: 'sms' });
    expect(started.status).toBe(201);
    const rid = suite.sb.sessionsFor(n).at(-1)!.request_id;
    await suite.sb.deliver(rid);
    const code = String(suite.sb.getSession(rid)!.code);
    expect((await post('check', { verification_id: started.body.verification_id, code })).body.verified).toBe(
      true,
    );
    const pending = await post('start', { phone_number: n, method: 'flash_call' });
    expect(pending.status).toBe(201);
    return [String(started.body.verification_id), String(pending.body.verification_id)];
  }

  async function proveForgotten(
    stores: { store: StoreOption; dump: () => Promise<string[]> },
    by: 'phoneNumber' | 'owner',
  ): Promise<void> {
    const [a, b] = [await boot(stores.store), await boot(stores.store)];
    const [n, owner] = [phone(), `owner-${randomUUID()}`];
    const [other, otherOwner] = [phone(), `owner-${randomUUID()}`];
    const ids = await verifyAndLeavePending(a, n, owner);
    const kept = await verifyAndLeavePending(a, other, otherOwner);
    const claims = a.app.get(VerifiedPhoneClaims, { strict: false });
    const verifiedAt = new Date(suite.sb.now());
    const claim = await claims.issue({ phoneNumber: n, owner, verifiedAt });
    const otherClaim = await claims.issue({ phoneNumber: other, owner: otherOwner, verifiedAt });
    expect(await claims.read(claim, owner)).not.toBeNull();

    // Asked on the other instance.
    const report = await b.app
      .get(VerificationErasure, { strict: false })
      .forget(by === 'phoneNumber' ? { phoneNumber: n } : { owner });
    expect(report).toMatchObject({ sessions: 2, liveSessions: 1 });
    expect(report.historyEntries).toBeGreaterThanOrEqual(4);
    expect(report.counters).toBeGreaterThan(0);

    for (const host of [a, b]) {
      for (const id of ids) {
        const status = await call(host.url, 'GET', `/verification/status/${id}`, undefined, {
          'x-user': owner,
        });
        expect(status.status).toBe(404);
        const check = await call(
          host.url,
          'POST',
          '/verification/check',
          { verification_id: id, code: '0000' },
          { 'x-user': owner },
        );
        expect(check.status).toBe(404);
      }
      expect(await host.app.get(VerifiedPhoneClaims, { strict: false }).read(claim, owner)).toBeNull();
      const history = host.app.get(VerificationHistory, { strict: false });
      // A number's erasure empties its history; an owner's leaves the number's (its subject's, not the
      // owner's to remove) with the owner taken out of every entry.
      const numbers = await history.list({ phoneNumber: n });
      if (by === 'phoneNumber') expect(numbers).toEqual([]);
      else {
        expect(numbers.map((e) => [e.kind, e.check ?? e.status])).toEqual(
          expect.arrayContaining([
            ['start', 'sent'],
            ['check', 'right'],
            ['outcome', 'verified'],
          ]),
        );
        expect(numbers.filter((e) => e.owner !== undefined)).toEqual([]);
      }
      expect(await history.list({ owner })).toEqual([]);
      // Someone else's verifications, history and claims are untouched.
      for (const id of kept)
        expect(
          (await call(host.url, 'GET', `/verification/status/${id}`, undefined, { 'x-user': otherOwner }))
            .status,
        ).toBe(200);
      expect((await history.list({ phoneNumber: other })).length).toBeGreaterThanOrEqual(4);
      expect(
        await host.app.get(VerifiedPhoneClaims, { strict: false }).read(otherClaim, otherOwner),
      ).not.toBeNull();
    }

    // The dump: no value opens to the subject (nor to the owner when the number was forgotten); the
    // subject's digest names the erasure mark and, for a number, its own limits (counts that expire
    // with their window: an erasure buys no fresh budget), nothing else.
    const keys = keysOf(a);
    const lines = await stores.dump();
    const opened = lines.flatMap((line) =>
      (line.match(/v1\.[A-Za-z0-9_-]+/g) ?? []).map((t) => keys.open(t) ?? ''),
    );
    expect(
      opened.filter((text) => text.includes(owner) || (by === 'phoneNumber' && text.includes(n))),
    ).toEqual([]);
    expect(opened.some((text) => text.includes(other))).toBe(true);
    const digests = [keys.digest(by === 'phoneNumber' ? n : owner)];
    const naming = lines.filter((line) => digests.some((d) => line.includes(d)));
    const erasureMark = (line: string) => line.split(' ')[0]!.endsWith(':forgotten') && / [\d:]+$/.test(line);
    const limit = (line: string) => by === 'phoneNumber' && /(^|:)protect:[\w:-]+ [\d:]+$/.test(line);
    expect(
      naming.filter((line) => !erasureMark(line) && !limit(line) && !isErasureIndexCounter(line)),
    ).toEqual([]);
    expect(naming.length).toBeGreaterThan(0);
    // What stays named by its sessions' ids holds no giver (an address's or caller's digest, a device):
    // counts, once-marks, ids and sealed values only.
    const rids = suite.sb.sessionsFor(n).map((s) => s.request_id);
    const session = lines.filter((line) => rids.some((id) => line.includes(id)));
    const bare = /^(\d+:)?(\d+|done|forgotten|[0-9a-f-]{36}|v1\.[\w-]+)( v1\.[\w-]+)?$/;
    expect(session.filter((line) => !bare.test(line.split(' ').slice(1).join(' ')))).toEqual([]);
    expect(session.length).toBeGreaterThan(0);
  }

  it.each(['phoneNumber', 'owner'] as const)('MemoryStore, by %s: two instances on one store', async (by) => {
    const store = new MemoryStore({ clock: () => suite.sb.now() });
    try {
      await proveForgotten({ store, dump: async () => dumpMemoryStore(store) }, by);
    } finally {
      for (const h of hosts.splice(0)) await h.close();
      await store.close();
    }
  });

  it.each(['phoneNumber', 'owner'] as const)(
    'RedisStore, by %s: forgotten on one instance, gone on the other',
    async (by) => {
      const keyPrefix = `pv-erase-${randomUUID()}:`;
      await proveForgotten(
        {
          store: { url: sharedRedisUrl(), keyPrefix },
          dump: () => dumpRedisPrefix(sharedRedisUrl(), keyPrefix),
        },
        by,
      );
    },
  );

  it("an owner erased in the pumping window after its starts: no key names the owner's caller digest, the last window's counters included", async () => {
    const store = new MemoryStore({ clock: () => suite.sb.now() });
    try {
      const host = await boot(store);
      const [n, owner] = [phone(), `owner-${randomUUID()}`];
      await verifyAndLeavePending(host, n, owner);
      const tag = keysOf(host).digest(`owner:${owner}`);
      expect(dumpMemoryStore(store).filter((line) => line.includes(tag)).length).toBeGreaterThan(0);
      // The next pumping window (an hour): the counters of the one the starts were in still live.
      await suite.sb.advance(60 * 60_000);
      await host.app.get(VerificationErasure, { strict: false }).forget({ owner });
      expect(dumpMemoryStore(store).filter((line) => line.includes(tag))).toEqual([]);
    } finally {
      for (const h of hosts.splice(0)) await h.close();
      await store.close();
    }
  });

  it("a session past its expiry is still found and erased while its record is kept: a tick before the record's end, by number and by owner", async () => {
    const store = new MemoryStore({ clock: () => suite.sb.now() });
    try {
      const host = await boot(store);
      const erasure = host.app.get(VerificationErasure, { strict: false });
      for (const by of ['phoneNumber', 'owner'] as const) {
        const [n, owner] = [phone(), `owner-${randomUUID()}`];
        const started = await call(
          host.url,
          'POST',
          '/verification/start',
          { phone_number: n, method: 'sms' },
          { 'x-user': owner },
        );
        expect(started.status).toBe(201);
        const id = String(started.body.verification_id);
        const expiresAt = Date.parse(String(started.body.expires_at));
        const status = () =>
          call(host.url, 'GET', `/verification/status/${id}`, undefined, { 'x-user': owner });
        await suite.sb.advance(expiresAt - suite.sb.now() + 1000);
        expect((await status()).body.status).toBe('expired');
        // The record is kept a day past the expiry: an erasure one tick before that still finds it.
        await suite.sb.advance(expiresAt + 24 * 3_600_000 - 1 - suite.sb.now());
        expect((await status()).status).toBe(200);
        const report = await erasure.forget(by === 'phoneNumber' ? { phoneNumber: n } : { owner });
        expect(report).toMatchObject({ sessions: 1, liveSessions: 0 });
        expect((await status()).status).toBe(404);
      }
    } finally {
      for (const h of hosts.splice(0)) await h.close();
      await store.close();
    }
  });

  it('an erased live session stays erased as long as its record would have lived (its life left plus a day): a poll a tick before that end asks the API nothing and answers 404', async () => {
    const store = new MemoryStore({ clock: () => suite.sb.now() });
    try {
      const host = await boot(store);
      const [n, owner] = [phone(), `owner-${randomUUID()}`];
      const started = await call(
        host.url,
        'POST',
        '/verification/start',
        { phone_number: n, method: 'sms' },
        { 'x-user': owner },
      );
      expect(started.status).toBe(201);
      const id = String(started.body.verification_id);
      const erasedAt = suite.sb.now();
      const lifeLeft = Date.parse(String(started.body.expires_at)) - erasedAt;
      expect(lifeLeft).toBeGreaterThan(60_000);
      await host.app.get(VerificationErasure, { strict: false }).forget({ phoneNumber: n });
      // Its record, had it not been erased, would have been kept until its expiry plus a day.
      await suite.sb.advance(erasedAt + lifeLeft + 24 * 3_600_000 - 1 - suite.sb.now());
      const before = suite.sb.requestCount('GET /v1/verify/:id');
      const status = await call(host.url, 'GET', `/verification/status/${id}`, undefined, {
        'x-user': owner,
      });
      expect(status.status).toBe(404);
      expect(suite.sb.requestCount('GET /v1/verify/:id')).toBe(before);
      const keys = keysOf(host);
      const opened = dumpMemoryStore(store).flatMap((line) =>
        (line.match(/v1\.[A-Za-z0-9_-]+/g) ?? []).map((t) => keys.open(t) ?? ''),
      );
      expect(opened.filter((text) => text.includes(n))).toEqual([]);
    } finally {
      for (const h of hosts.splice(0)) await h.close();
      await store.close();
    }
  });

  it('bad input: no subject, both, a malformed number, an empty or non-string owner is the validation error naming the field and why', async () => {
    const erasure = (await boot(new MemoryStore({ clock: () => suite.sb.now() }))).app.get(
      VerificationErasure,
      {
        strict: false,
      },
    );
    const either = 'give either phoneNumber (E.164) or owner';
    const e164 = 'must be a phone number in E.164 (+79161234567)';
    const cases: [unknown, string, string][] = [
      [{}, 'phoneNumber', either],
      [{ phoneNumber: '+79161234567', owner: 'u1' }, 'phoneNumber', either],
      [{ phoneNumber: '89161234567' }, 'phoneNumber', e164],
      [{ phoneNumber: 79161234567 }, 'phoneNumber', e164],
      // A list whose text is a number (JSON from a host's form) is not one.
      [{ phoneNumber: ['+79161234567'] }, 'phoneNumber', e164],
      [{ owner: '' }, 'owner', 'must be a non-empty string'],
      [{ owner: 42 }, 'owner', 'must be a non-empty string'],
      [undefined, 'phoneNumber', either],
    ];
    for (const [input, field, message] of cases) {
      const error = await erasure.forget(input as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VerificationClientError);
      expect((error as VerificationClientError).errorCode).toBe('validation_error');
      expect((error as VerificationClientError).message).toBe(message);
      expect((error as VerificationClientError).extra).toEqual({ errors: [{ field, message }] });
    }
  });
});
