/**
 * What a store dump gives away: after every kind of journey (each method; a check with a wrong and a
 * right code; a switch; refusals; a test number; webhooks; history; a named registration), on a
 * MemoryStore and on a RedisStore, no phone number (E.164 or national digits), address or owner
 * appears in clear, nor as the unkeyed SHA-256 digest the store keys were once named by.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreOption } from '../../src/store/create-store.js';
import { VERIFICATION_METHODS } from '../../src/core/verification-method.js';
import { sandboxSuite, type SandboxSuite } from '../support/sandbox-suite.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { dumpMemoryStore, dumpRedisPrefix, leaks } from '../support/store-dump.js';
import { call, createTestApp, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const METHODS = ['reverse_flash_call', 'flash_call', 'msgr1_otp', 'msgr2_bot', 'sms', 'operator_id'] as const;
const REVIEWER = '+79990000007';
const REVIEWER_CODE = '4321';
const ADDRESSES = ['127.0.0.1', '::ffff:127.0.0.1', '::1'];

/** A fresh number per call, unlikely to occur in a dump by chance. */
let serial = 0;
function phone(): string {
  serial += 1;
  return `+7916${String(process.pid % 1000).padStart(3, '0')}${String(5000 + serial).padStart(4, '0')}`;
}

interface Subjects {
  numbers: string[];
  owners: string[];
}

/** Boots the default registration and a named one on one store and runs every kind of journey through them. */
export async function everyJourney(
  suite: SandboxSuite,
  store: StoreOption,
  hosts: TestApp[],
): Promise<Subjects> {
  const sb = suite.sb;
  const base = (prefix: string, name?: string) =>
    moduleOptions(sb, {
      ...(name === undefined ? {} : { name }),
      routes: { prefix },
      store,
      history: {},
      limits: { resendCooldownMs: 60_000, spendCap: false },
      testNumbers: { numbers: [{ phoneNumber: REVIEWER, code: REVIEWER_CODE }] },
    });
  const host = await createTestApp({ platform: 'express', module: base('verification'), rawBody: true });
  hosts.push(host);
  await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${host.url}/verification/webhooks` });
  const north = await createTestApp({ platform: 'express', module: base('north', 'north'), rawBody: true });
  hosts.push(north);
  const numbers: string[] = [];
  const owners: string[] = [];
  const as = (owner: string) => ({ 'x-user': owner });
  const newOwner = () => {
    const owner = `owner-${randomUUID()}`;
    owners.push(owner);
    return owner;
  };
  const newNumber = () => {
    const n = phone();
    numbers.push(n);
    return n;
  };
  const post = (url: string, prefix: string, path: string, body: unknown, owner: string) =>
    call(url, 'POST', `/${prefix}/${path}`, body, as(owner));
  const requestIdOf = (n: string) => sb.sessionsFor(n).at(-1)!.request_id;

  // Every method, each for a number and owner of its own; the status read by the owner.
  for (const method of METHODS) {
    const owner = newOwner();
    const n = newNumber();
    const started = await post(host.url, 'verification', 'start', { phone_number: n, method }, owner);
    expect(started.status).toBe(201);
    const rid = requestIdOf(n);
    if (method === 'reverse_flash_call') await sb.call(rid, n);
    else if (method === 'operator_id') await sb.operator(rid, 'approve');
    else if (method === 'msgr2_bot') await sb.share(rid, n);
    else await sb.deliver(rid);
    const id = String(started.body.verification_id);
    expect((await call(host.url, 'GET', `/verification/status/${id}`, undefined, as(owner))).status).toBe(
      200,
    );
    if (method === 'sms') {
      const code = String(sb.getSession(rid)!.code);
      const wrong = code === '0000' ? '1111' : '0000';
      const checks = [wrong, code];
      for (const c of checks)
        await post(host.url, 'verification', 'check', { verification_id: id, code: c }, owner);
    }
    if (method === 'flash_call') {
      const switched = await post(
        host.url,
        'verification',
        'switch',
        { verification_id: id, method: 'sms' },
        owner,
      );
      expect(switched.status).toBe(201);
      // A resend inside the cooldown: refused (429), written to history.
      const again = await post(host.url, 'verification', 'start', { phone_number: n, method: 'sms' }, owner);
      expect(again.status).toBe(429);
    }
  }
  // A refused number (outside the allowed countries) and a test number.
  const refusedOwner = newOwner();
  const foreign = '+14155550123';
  numbers.push(foreign);
  expect(
    (await post(host.url, 'verification', 'start', { phone_number: foreign, method: 'sms' }, refusedOwner))
      .status,
  ).toBe(400);
  const reviewerOwner = newOwner();
  numbers.push(REVIEWER);
  const test = await post(
    host.url,
    'verification',
    'start',
    { phone_number: REVIEWER, method: 'sms' },
    reviewerOwner,
  );
  await post(
    host.url,
    'verification',
    'check',
    { verification_id: test.body.verification_id, code: '0000' },
    reviewerOwner,
  );
  await post(
    host.url,
    'verification',
    'check',
    { verification_id: test.body.verification_id, code: REVIEWER_CODE },
    reviewerOwner,
  );
  // The named registration.
  const northOwner = newOwner();
  const northNumber = newNumber();
  const northStart = await post(
    north.url,
    'north',
    'start',
    { phone_number: northNumber, method: 'sms' },
    northOwner,
  );
  expect(northStart.status).toBe(201);
  const northRid = requestIdOf(northNumber);
  await sb.deliver(northRid);
  const northCode = String(sb.getSession(northRid)!.code);
  await post(
    north.url,
    'north',
    'check',
    { verification_id: northStart.body.verification_id, code: northCode },
    northOwner,
  );
  await sb.webhooksIdle();
  return { numbers, owners };
}

function assertNoLeak(lines: string[], subjects: Subjects): void {
  expect(lines.length).toBeGreaterThan(50);
  expect(leaks(lines, { ...subjects, addresses: ADDRESSES, methods: [...VERIFICATION_METHODS] })).toEqual([]);
}

describe('a store dump after every kind of journey', () => {
  const suite = sandboxSuite();
  const hosts: TestApp[] = [];
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.close();
  });

  it('MemoryStore: no number, address or owner in clear or as a plain digest', async () => {
    const store = new MemoryStore({ clock: () => suite.sb.now() });
    const run = await everyJourney(suite, store, hosts);
    try {
      // The dump reads what the journeys wrote (the history names each number).
      expect(dumpMemoryStore(store).some((line) => line.startsWith('history:'))).toBe(true);
      assertNoLeak(dumpMemoryStore(store), run);
    } finally {
      for (const h of hosts.splice(0)) await h.close();
      await store.close();
    }
  });

  it('RedisStore: no number, address or owner under the run’s prefix, whatever the key type', async () => {
    const keyPrefix = `pv-dump-${randomUUID()}:`;
    const run = await everyJourney(suite, { url: sharedRedisUrl(), keyPrefix }, hosts);
    const lines = await dumpRedisPrefix(sharedRedisUrl(), keyPrefix);
    expect(lines.some((line) => line.startsWith(`${keyPrefix}history:`))).toBe(true);
    assertNoLeak(lines, run);
  });
});
