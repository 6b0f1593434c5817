/**
 * Attack (lane attack-m): after `forget({ owner })`, a store dump still holds keys named by a keyed digest
 * of something that contains the owner (`owner:<id>`, `owner:<id>\n<number>`, ...). Every such digest is
 * recorded as the module computes it; after the erasure, no line but the erasure mark may carry one.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { DataKeys } from '../../src/core/data-keys.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { dumpMemoryStore, isErasureIndexCounter } from '../support/store-dump.js';
import { call, createTestApp, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';
import { as, bootGuardHost } from '../verified-phone/guard-host.js';

/** Records every keyed digest the module computes from now on, with what it digests (each suite restores it). */
function recordDigests(seen: Map<string, string>, original: DataKeys['digest']): void {
  DataKeys.prototype.digest = function (this: DataKeys, value: string): string {
    const d = original.call(this, value);
    seen.set(d, value);
    return d;
  };
}

/** The store's lines that carry a digest of something containing `subject`, with what it digests. */
function namedBy(store: MemoryStore, seen: Map<string, string>, subject: string): string[] {
  return dumpMemoryStore(store).flatMap((line) =>
    [...seen]
      .filter(([d, v]) => v.includes(subject) && line.includes(d))
      .map(([, v]) => `${line}  <- ${JSON.stringify(v)}`),
  );
}

let serial = 0;
const phone = () =>
  `+7916${String(process.pid % 1000).padStart(3, '0')}${String(3000 + ++serial).padStart(4, '0')}`;

describe('attack: what an erasure leaves named by its subject', () => {
  const suite = sandboxSuite();
  const hosts: TestApp[] = [];
  const seen = new Map<string, string>();
  const original = DataKeys.prototype.digest;
  afterEach(async () => {
    DataKeys.prototype.digest = original;
    for (const h of hosts.splice(0)) await h.close();
  });

  it.each(['owner', 'phoneNumber'] as const)(
    "no key or value derived from the %s survives its forget but the erasure mark (and a number's limits)",
    async (by) => {
      recordDigests(seen, original);
      const store = new MemoryStore({ clock: () => suite.sb.now() });
      const host = await createTestApp({
        platform: 'express',
        module: moduleOptions(suite.sb, { store, history: {}, limits: { spendCap: false } }),
      });
      hosts.push(host);
      const owner = `owner-${randomUUID()}`;
      const n = phone();
      const post = (path: string, body: unknown) =>
        call(host.url, 'POST', `/verification/${path}`, body, { 'x-user': owner });
      const started = await post('start', { phone_number: n, method: 'sms' });
      expect(started.status).toBe(201);
      const id = String(started.body.verification_id);
      await call(host.url, 'GET', `/verification/status/${id}`, undefined, { 'x-user': owner });
      const rid = suite.sb.sessionsFor(n).at(-1)!.request_id;
      await suite.sb.deliver(rid);
      expect((await post('check', { verification_id: id, code: '0000' })).status).toBeGreaterThanOrEqual(400);
      const code = String(suite.sb.getSession(rid)!.code);
      expect((await post('check', { verification_id: id, code })).body.verified).toBe(true);

      await host.app
        .get(VerificationErasure, { strict: false })
        .forget(by === 'owner' ? { owner } : { phoneNumber: n });
      const subject = by === 'owner' ? owner : n;

      const named = namedBy(store, seen, subject);
      const erasureMark = (line: string) => line.split(' ')[0]!.endsWith(':forgotten');
      // A number's own limits stay by design (counts under protect:, expiring with their window).
      const limit = (line: string) =>
        by === 'phoneNumber' &&
        (/(^|:)protect:[\w:-]+ [\d:]+ {2}<-/.test(line) || line.startsWith('protect:cooldown:'));
      expect(named.filter((l) => !erasureMark(l) && !limit(l) && !isErasureIndexCounter(l))).toEqual([]);
      await store.close();
    },
  );

  // Attack (on a7f3a21's free-start proofs): a pending free start keeps its points for its proof under a key
  // whose value names the owner's digest; forget({ owner }) must not leave it.
  it('nothing derived from the owner survives forget({ owner }) of a pending free start', async () => {
    recordDigests(seen, original);
    const store = new MemoryStore({ clock: () => suite.sb.now() });
    const host = await createTestApp({
      platform: 'express',
      trustProxy: true,
      module: moduleOptions(suite.sb, { store, history: {}, limits: { spendCap: false } }),
    });
    hosts.push(host);
    const owner = `owner-${randomUUID()}`;
    const started = await call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: phone(), method: 'reverse_flash_call' },
      { 'x-user': owner, 'x-forwarded-for': '203.0.113.77' },
    );
    expect(started.status).toBe(201);
    await host.app.get(VerificationErasure, { strict: false }).forget({ owner });
    const named = namedBy(store, seen, owner);
    expect(
      named.filter((l) => !l.split(' ')[0]!.endsWith(':forgotten') && !isErasureIndexCounter(l)),
    ).toEqual([]);
    await store.close();
  });
});

describe('attack: an owner erasure after guarded reads and a reviewer number', () => {
  const suite = sandboxSuite();
  const hosts: TestApp[] = [];
  const seen = new Map<string, string>();
  const original = DataKeys.prototype.digest;
  afterEach(async () => {
    DataKeys.prototype.digest = original;
    for (const h of hosts.splice(0)) await h.close();
  });

  it('nothing named by the owner survives forget({ owner }) but the erasure mark', async () => {
    recordDigests(seen, original);
    const store = new MemoryStore({ clock: () => suite.sb.now() });
    const account = await suite.sb.createAccount({ balance: 100 });
    const REVIEWER = '+79990000007';
    const host = await bootGuardHost('express', suite.sb, account, {
      store,
      history: {},
      limits: { spendCap: false },
      testNumbers: { numbers: [{ phoneNumber: REVIEWER, code: '246810' }] },
    });
    hosts.push(host);
    const owner = `owner-${randomUUID()}`;
    const n = phone();
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      call(host.url, 'POST', path, body, as(owner, headers));
    const started = await post('/verification/start', { phone_number: n, method: 'sms' });
    expect(started.status).toBe(201);
    const id = String(started.body.verification_id);
    const rid = suite.sb.sessionsFor(n).at(-1)!.request_id;
    await suite.sb.deliver(rid);
    const code = String(suite.sb.getSession(rid)!.code);
    expect((await post('/verification/check', { verification_id: id, code })).body.verified).toBe(true);
    expect((await post('/account/phone', {}, { 'x-verification-id': id })).status).toBe(201);
    const test = await post('/verification/start', { phone_number: REVIEWER, method: 'sms' });
    expect(test.status).toBe(201);
    const testId = String(test.body.verification_id);
    await post('/verification/check', { verification_id: testId, code: '000000' });
    await post('/verification/check', { verification_id: testId, code: '246810' });

    await host.app.get(VerificationErasure, { strict: false }).forget({ owner });

    const named = namedBy(store, seen, owner);
    expect(
      named.filter((l) => !l.split(' ')[0]!.endsWith(':forgotten') && !isErasureIndexCounter(l)),
    ).toEqual([]);
    await store.close();
  });
});
