import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import { SessionRecordRepository } from '../../src/sessions/session-record.repository.js';
import { CapturingLogger } from '../support/log-capture.js';
import { FlakyListener } from '../events/flaky-listener.js';
import { slowWritesStore } from '../support/round-trip-store.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import {
  drive,
  enterCode,
  eventsOf,
  METHODS,
  reconcilerOf,
  settle,
  startHost,
  startSession,
  type StartedSession,
} from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const GET_SESSION = 'GET /v1/verify/:id';
/** A tick no other timer in these tests uses, so the spy below can tell the reconciler's apart. */
const TICK_MS = 7;

/** Resolves once `done()` holds, checking every few ms of real time; fails after `withinMs`. */
async function eventually(done: () => boolean, withinMs = 5000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe.each(ONE_PLATFORM)('reconciler across instances and the app lifecycle (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    sb = suite.sb;
    // Two instances of one deployment on one Redis: no webhooks, so the spec's pace applies. Their
    // passes are the test's alone (runOnce): an own tick (real time) landing while the test drives
    // sessions and moves the sandbox's clock would poll them between its steps, which the counts
    // and events below do not allow for (seen once under a loaded full run: an outcome a pass late).
    const store = { url: sharedRedisUrl(), keyPrefix: `test-reconciler-${randomBytes(6).toString('hex')}:` };
    const module = { webhooks: undefined, store, reconcile: { tickMs: 3_600_000 } };
    a = await suite.boot(() => startHost(platform, sb, { module, receiveWebhooks: false }));
    b = await suite.boot(() => startHost(platform, sb, { module, receiveWebhooks: false }));
  });

  it('polls each session once per interval in total and emits each outcome once across both instances', async () => {
    const sessions: StartedSession[] = [];
    for (const method of METHODS.filter((m) => m !== 'reverse_flash_call'))
      for (let i = 0; i < 4; i++) sessions.push(await startSession(i % 2 ? a : b, sb, method));
    sb.resetRequestCounts();
    await sb.advance(2500);
    await Promise.all([reconcilerOf(a).runOnce(), reconcilerOf(b).runOnce(), reconcilerOf(a).runOnce()]);
    expect(sb.requestCount(GET_SESSION)).toBe(sessions.length);
    // Frontends polling through either instance in the same interval add nothing upstream.
    for (const s of sessions) {
      const via = sessions.indexOf(s) % 2 ? a : b;
      const res = await fetch(`${via.url}/verification/status/${s.verificationId}`, {
        headers: { 'x-user': s.owner },
      });
      expect(res.status).toBe(200);
    }
    expect(sb.requestCount(GET_SESSION)).toBe(sessions.length);

    for (const s of sessions) await drive(sb, s, 'verified', { viaFallback: s.method === 'operator_id' });
    await sb.advance(2500);
    await Promise.all([reconcilerOf(a).runOnce(), reconcilerOf(b).runOnce()]);
    expect(sb.requestCount(GET_SESSION)).toBe(2 * sessions.length);
    for (const s of sessions) {
      const all = [...eventsOf(a, s.requestId), ...eventsOf(b, s.requestId)];
      expect({ method: s.method, all: all.filter((e) => e === 'verification.verified') }).toEqual({
        method: s.method,
        all: ['verification.verified'],
      });
    }
    expect(await reconcilerOf(a).pending()).toBe(0);
  });

  it('starts polling on application bootstrap and leaves no timer behind after app.close()', async () => {
    const logger = new CapturingLogger();
    const host = await startHost(platform, sb, {
      module: { webhooks: undefined, reconcile: { tickMs: TICK_MS } },
      receiveWebhooks: false,
      logger,
    });
    let closed = false;
    try {
      const s = await startSession(host, sb, 'reverse_flash_call');
      await drive(sb, s, 'verified');
      await sb.advance(1500);
      // No runOnce here: the instance's own tick finds it.
      await eventually(() => eventsOf(host, s.requestId).length > 0);
      expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);

      const pending = await startSession(host, sb, 'sms');
      const timers = jest.spyOn(globalThis, 'setTimeout');
      const ticksArmed = () => timers.mock.calls.filter((args) => args[1] === TICK_MS).length;
      await eventually(() => ticksArmed() >= 2); // the tick re-arms itself while the app runs
      // A host that never closes its app (a script, a worker) still exits: no tick holds the process.
      const ticks = timers.mock.calls.flatMap((args, i) =>
        args[1] === TICK_MS ? [timers.mock.results[i]!.value as NodeJS.Timeout] : [],
      );
      expect(ticks.map((timer) => timer.hasRef())).toStrictEqual(ticks.map(() => false));
      await host.close();
      closed = true;
      timers.mockClear();
      sb.resetRequestCounts();
      await sb.advance(10_000);
      await new Promise((resolve) => setTimeout(resolve, 20 * TICK_MS));
      await settle(sb);
      expect(ticksArmed()).toBe(0);
      expect(sb.requestCount(GET_SESSION)).toBe(0);
      expect(eventsOf(host, pending.requestId)).toEqual([]);
      // No pass ran against the closed store (a tick armed before the close would fail, and say so).
      expect(logger.lines.filter((line) => line.includes('reconcile pass failed'))).toEqual([]);
    } finally {
      jest.restoreAllMocks();
      if (!closed) await host.close();
    }
  });

  it('app.close() waits for a pass in progress: the outcome it was reading is emitted before close resolves, nothing after', async () => {
    const host = await startHost(platform, sb, {
      module: { webhooks: undefined, reconcile: { tickMs: 3_600_000 } },
      receiveWebhooks: false,
    });
    const s = await startSession(host, sb, 'reverse_flash_call');
    await drive(sb, s, 'verified');
    await sb.advance(1500);
    sb.resetRequestCounts();
    sb.addFault({ route: GET_SESSION, kind: 'latency', latency_ms: 300 });
    try {
      const pass = reconcilerOf(host).runOnce();
      await eventually(() => sb.requestCount(GET_SESSION) === 1);
      await host.close();
      expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
      await expect(pass).resolves.toBe(1);
    } finally {
      sb.clearFaults();
    }
  });

  it('a pass the store fails is logged and the tick goes on: once the store is back, its own tick finds the outcome', async () => {
    const state = { down: true };
    const store = new (class extends MemoryStore {
      override claimDue(queue: string, limit: number, leaseMs: number): Promise<string[]> {
        if (state.down) return Promise.reject(new VerificationStoreUnavailableError('claimDue', 'down'));
        return super.claimDue(queue, limit, leaseMs);
      }
    })({ clock: () => sb.now() });
    const logger = new CapturingLogger();
    const host = await startHost(platform, sb, {
      module: { webhooks: undefined, store, reconcile: { tickMs: TICK_MS } },
      receiveWebhooks: false,
      logger,
    });
    try {
      const s = await startSession(host, sb, 'reverse_flash_call');
      const failed = () => logger.lines.filter((l) => l.startsWith('warn reconcile pass failed')).length;
      await eventually(() => failed() >= 1);
      await drive(sb, s, 'verified');
      await sb.advance(1500);
      state.down = false;
      // No runOnce here: the tick armed after the failed pass finds it.
      await eventually(() => eventsOf(host, s.requestId).length > 0);
      expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
    } finally {
      await host.close();
      await store.close();
    }
  });

  it('a queued session whose record is gone (evicted) is out of the queue when the pass that found it ends, nothing asked upstream', async () => {
    // Every removal from the queue is slow: one the pass does not wait for lands only after what follows it.
    const slow = slowWritesStore(
      () => sb.now(),
      (method) => method === 'unschedule',
    );
    const host = await startHost(platform, sb, {
      module: { webhooks: undefined, store: slow.store, reconcile: { tickMs: 3_600_000 } },
      receiveWebhooks: false,
    });
    try {
      const s = await startSession(host, sb, 'sms');
      const queue = reconcilerOf(host);
      expect(await queue.pending()).toBe(1);
      await slow.inner.delete(SessionRecordRepository.key(s.requestId));
      await sb.advance(30_000);
      sb.resetRequestCounts();
      expect(await queue.runOnce()).toBe(1);
      expect(await queue.pending()).toBe(0);
      expect(sb.requestCount(GET_SESSION)).toBe(0);
    } finally {
      slow.land();
      await host.close();
    }
  });

  /** A MemoryStore whose next `schedule` (a pass's write of a session's next look) is held until it lands. */
  function heldSchedules() {
    let held: Promise<void> | undefined;
    let land = () => {};
    let reached = () => {};
    const store = new (class extends MemoryStore {
      override async schedule(queue: string, member: string, dueAt: number): Promise<void> {
        const wait = held;
        held = undefined;
        if (wait) {
          reached();
          await wait;
        }
        return super.schedule(queue, member, dueAt);
      }
    })({ clock: () => sb.now() });
    return {
      store,
      land: () => land(),
      /**
       * A pass that reaches the session's put-back, held there while the user enters the code on the check
       * route (verified, which takes it out of the queue), then lands: the pass's count of sessions looked at.
       */
      async checkDuringPass(host: TestApp, s: StartedSession): Promise<number> {
        await sb.deliver(s.requestId);
        await sb.advance(30_000);
        const atSchedule = new Promise<void>((resolve) => (reached = resolve));
        held = new Promise<void>((resolve) => (land = resolve));
        const pass = reconcilerOf(host).runOnce();
        await atSchedule;
        const checked = await enterCode(host, sb, s);
        expect(checked.body.verified).toBe(true);
        land();
        return pass;
      },
    };
  }

  it('a session a check settles while a pass puts it back in the queue leaves the queue with that pass, its event emitted once', async () => {
    const schedules = heldSchedules();
    const host = await startHost(platform, sb, {
      module: { webhooks: undefined, store: schedules.store, reconcile: { tickMs: 3_600_000 } },
      receiveWebhooks: false,
    });
    try {
      const s = await startSession(host, sb, 'sms');
      expect(await schedules.checkDuringPass(host, s)).toBe(1);
      expect(await reconcilerOf(host).pending()).toBe(0);
      expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
    } finally {
      schedules.land();
      await host.close();
      await schedules.store.close();
    }
  });

  it('a session a check settles while a pass puts it back, its listener failing on the check: that pass emits the event, as a poll', async () => {
    const schedules = heldSchedules();
    const host = await startHost(platform, sb, {
      module: { webhooks: undefined, store: schedules.store, reconcile: { tickMs: 3_600_000 } },
      receiveWebhooks: false,
      providers: [FlakyListener],
    });
    const listener = host.app.get(FlakyListener);
    listener.failFirst = true;
    try {
      const s = await startSession(host, sb, 'sms');
      expect(await schedules.checkDuringPass(host, s)).toBe(1);
      expect(listener.of(s.requestId)).toEqual(['verification.verified!', 'verification.verified']);
      expect(listener.deliveries.map((d) => d.payload.source)).toEqual(['check', 'poll']);
    } finally {
      schedules.land();
      await host.close();
      await schedules.store.close();
    }
  });
});
