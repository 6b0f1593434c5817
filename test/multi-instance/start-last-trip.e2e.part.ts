/**
 * What a second instance sees in the middle of a start's last round trip (issue 45: after the API, one
 * batch writes the record, reads its erasure mark and writes its erasure index slots; the permit's
 * writes, the coalescing hand-back among them, follow on the same round trip). On one Redis connection
 * the commands run in the order written, and another instance's may run between any two of them:
 * instance A's store here is one such connection (every operation in order, one at a time), and
 * instance B, on the same MemoryStore directly, acts between two of A's operations, at each point in turn.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { runOne, type StoreOperation } from '../../src/store/store-batch.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { dumpMemoryStore } from '../support/store-dump.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { freshIp, freshPhone, protectedHost, protectionFixture } from '../protection/protection-host.js';

/** The operations that cross the network. */
const REMOTE = new Set([
  'get',
  'set',
  'setIfAbsent',
  'replaceIfEquals',
  'delete',
  'increment',
  'schedule',
  'claimDue',
  'unschedule',
  'queueSize',
  'publish',
]);

/** The first write of a start's last round trip: its record, or an index slot. */
const FIRST_WRITE = /^set\((session|subject):/;

/** Runs before A's next operation once armed: what B does at that point. */
type Between = (operation: string) => Promise<void>;

/**
 * A MemoryStore as one connection: operations run one at a time in the order issued, a batch's in its
 * order, and `between` (once armed) runs before each of them.
 */
function oneConnection(inner: MemoryStore): { store: VerificationStore; arm(between?: Between): void } {
  let tail: Promise<unknown> = Promise.resolve();
  let between: Between | undefined;
  const queued = <T>(name: string, run: () => Promise<T>): Promise<T> => {
    const next = tail.then(async () => {
      await between?.(name);
      return run();
    });
    tail = next.catch(() => undefined);
    return next;
  };
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property === 'batch')
        return (operations: StoreOperation[]) =>
          Promise.all(operations.map((op) => queued(`${op.op}(${op.key})`, () => runOne(target, op))));
      if (typeof value !== 'function' || !REMOTE.has(String(property))) return value;
      return (...args: unknown[]) =>
        queued(`${String(property)}(${String(args[0])})`, () =>
          (value as (...a: unknown[]) => Promise<unknown>).apply(target, args),
        );
    },
  });
  return { store, arm: (b) => (between = b) };
}

describe.each(ONE_PLATFORM)("a second instance during a start's last round trip (%s)", (platform) => {
  const fx = protectionFixture();

  /** Two instances on one MemoryStore, A through one connection; owners by `x-user`. */
  async function deployment(): Promise<{
    a: TestApp;
    b: TestApp;
    inner: MemoryStore;
    arm(between?: Between): void;
  }> {
    const inner = new MemoryStore({ clock: () => fx.sb.now() });
    const connection = oneConnection(inner);
    const owner = (req: unknown) =>
      (req as { headers: Record<string, string | undefined> }).headers['x-user'];
    // Owners without a record are not held here (the defence reports only).
    const limits = { spendCap: false as const, pumping: { mode: 'monitor' as const } };
    const a = await protectedHost(fx.sb, platform, limits, { store: connection.store, owner });
    const b = await protectedHost(fx.sb, platform, limits, { store: inner, owner });
    return { a, b, inner, arm: connection.arm };
  }

  async function closeAll(d: { a: TestApp; b: TestApp; inner: MemoryStore }): Promise<void> {
    await Promise.all([d.a.close(), d.b.close()]);
    await d.inner.close();
  }

  const startAs = (host: TestApp, user: string, phone: string, ip: string) =>
    call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method: 'sms' },
      {
        'x-forwarded-for': ip,
        'x-user': user,
      },
    );

  /** A's operations from its record's write to its coalescing claim's hand-back, for a fresh owner and number. */
  async function lastTrip(): Promise<string[]> {
    const d = await deployment();
    const seen: string[] = [];
    d.arm(async (operation) => {
      const last = seen.at(-1);
      if (last?.startsWith('replaceIfEquals(protect:coalesce:')) return;
      if (seen.length > 0 || FIRST_WRITE.test(operation)) seen.push(operation);
    });
    expect((await startAs(d.a, `owner-${randomUUID()}`, freshPhone(), freshIp())).status).toBe(201);
    await closeAll(d);
    return seen;
  }

  it('an erasure between any two of its operations reports the session exactly when it removed it', async () => {
    const trip = await lastTrip();
    // The record, its erasure mark, its slots (number, owner), their subjects' erasure marks, the
    // attribution, the hand-back.
    expect(trip.map((op) => op.replace(/[:(].*$/, ''))).toEqual([
      'set',
      'get',
      'set',
      'set',
      'get',
      'get',
      'set',
      'replaceIfEquals',
    ]);
    const points = trip.length;
    for (let k = 0; k <= points; k++) {
      const d = await deployment();
      const [user, phone] = [`owner-${randomUUID()}`, freshPhone()];
      let seen = -1;
      let report: Awaited<ReturnType<VerificationErasure['forget']>> | undefined;
      d.arm(async (operation) => {
        if (seen < 0 && !FIRST_WRITE.test(operation)) return;
        if (++seen !== k) return;
        report = await d.b.app.get(VerificationErasure, { strict: false }).forget({ owner: user });
      });
      const started = await startAs(d.a, user, phone, freshIp());
      d.arm(undefined);
      const erasedDuring = report !== undefined;
      report ??= await d.b.app.get(VerificationErasure, { strict: false }).forget({ owner: randomUUID() });
      const status = await call(
        d.b.url,
        'GET',
        `/verification/status/${String(started.body.verification_id)}`,
        undefined,
        { 'x-user': user },
      );
      // Erased during the trip: found by its index slot, the session is removed and reported; else the
      // start finds its owner's erasure mark changed, removes what it wrote and answers 404. Never kept.
      expect({ k, started: started.status, removed: report.sessions, status: status.status }).toEqual(
        erasedDuring
          ? { k, started: started.status, removed: started.status === 201 ? 1 : report.sessions, status: 404 }
          : { k, started: 201, removed: 0, status: 200 },
      );
      if (erasedDuring) expect([201, 404]).toContain(started.status);
      await closeAll(d);
    }
  });

  it('an erasure of the owner around the reservation of its index slot: what the start keeps, the next erasure finds', async () => {
    // From the owner's mark read (then its day counter taken), B erases the owner before each operation.
    for (let k = 0; k < 4; k++) {
      const d = await deployment();
      const [user, phone] = [`owner-${randomUUID()}`, freshPhone()];
      let seen = -1;
      d.arm(async (operation) => {
        if (seen < 0 && !/^(get|increment)\(subject:\{o:/.test(operation)) return;
        if (++seen === k) await d.b.app.get(VerificationErasure, { strict: false }).forget({ owner: user });
      });
      const started = await startAs(d.a, user, phone, freshIp());
      d.arm(undefined);
      expect(seen).toBeGreaterThanOrEqual(k);
      // Kept by the start (it reserved after the erasure took the index), it is indexed: the next finds it.
      await d.b.app.get(VerificationErasure, { strict: false }).forget({ owner: user });
      const status =
        started.status === 201
          ? (
              await call(
                d.b.url,
                'GET',
                `/verification/status/${String(started.body.verification_id)}`,
                undefined,
                { 'x-user': user },
              )
            ).status
          : started.status;
      expect({ k, status }).toEqual({ k, status: 404 });
      await closeAll(d);
    }
  });

  it('an identical start on the other instance is handed the session back as soon as the claim names it', async () => {
    const d = await deployment();
    const [user, phone, ip] = [`owner-${randomUUID()}`, freshPhone(), freshIp()];
    let duplicate: Promise<Awaited<ReturnType<typeof call>>> | undefined;
    const handedBack = () =>
      dumpMemoryStore(d.inner).some((line) => /^protect:coalesce:\S+ session:/.test(line));
    // B waits while the claim is A's (it polls the store in real time); at the first point of A's
    // operations where the claim names the session, B starts too and is answered there.
    d.arm(async () => {
      if (duplicate === undefined && handedBack()) {
        duplicate = startAs(d.b, user, phone, ip);
        await duplicate;
      }
    });
    const started = await startAs(d.a, user, phone, ip);
    expect(started.status).toBe(201);
    d.arm(undefined);
    // The hand-back may be A's last operation before its answer: B starts right after, then.
    duplicate ??= startAs(d.b, user, phone, ip);
    const again = await duplicate;
    expect({ status: again.status, resumed: again.body.resumed, id: again.body.verification_id }).toEqual({
      status: 201,
      resumed: true,
      id: started.body.verification_id,
    });
    await closeAll(d);
  });
});
