/**
 * The soak: virtual users run whole verifications (every method, right and wrong codes,
 * double-clicks, abandoned sessions, service-side failures) against a host app over HTTP while
 * the sandbox injects faults into a share of the API calls and drops a share of the webhooks.
 * Afterwards the clocks move past every expiry, the reconciler settles what the webhooks missed,
 * and the run is checked: every session has exactly one terminal event, the one the API shows;
 * the module's view of each session is the API's; no start paid twice; the sandbox's charges equal
 * the costs the API reported; and, once the records' retention has passed, the host's store and
 * heap are back where they started. Shared by the jest soak and `npm run bench -- soak`; it talks
 * to the host and the sandbox over HTTP only, so either may run in another process.
 */
import { PhoneNumbers } from './phone-numbers.js';
import type {
  SandboxControlClient,
  SandboxControlRouteFault,
  SandboxControlSession,
} from '../../../src/testing/index.js';
import { soakFetch } from './short-keep-alive.js';

export interface SoakTarget {
  hostUrl: string;
  control: SandboxControlClient;
  /** The sandbox account the host's module uses. */
  apiKey: string;
  /** Moves the sandbox's clock and the module's clock forward together. */
  advanceClock(ms: number): Promise<void>;
  /** Every event the host emitted: request_id → event names in order. */
  events(): Promise<Record<string, string[]>>;
  clearEvents(): Promise<void>;
  /** The `cost.amount` the module keeps for each session (what the API reported), null without a record. */
  recordedCosts(requestIds: string[]): Promise<Record<string, number | null>>;
  reconcileQueueSize(): Promise<number>;
  /** The host's heap after full collections. */
  heapUsed(): Promise<number>;
  /** Entries in the host's MemoryStore. */
  storeEntries(): Promise<number>;
}

export interface SoakOptions {
  /** Traffic of the measured phase (a warm-up phase of `warmupMs` comes first). */
  durationMs: number;
  warmupMs: number;
  users: number;
  /** Share of the module's upstream calls that meet an injected fault (one-shot faults, added before requests). */
  faultRate: number;
  /** Share of the sandbox's webhook messages dropped. */
  webhookLossRate: number;
  /** The module's api.timeoutMs: POST latency faults stay well under it (a late POST is processed). */
  apiTimeoutMs: number;
  /**
   * Starts of each phase answered past the time-out whatever the dice say (default 6), so that every phase has
   * in-doubt sessions for webhooks to reveal: the random faults alone made a few in a slow run, and all of
   * their webhooks were lost in about one run of a hundred.
   */
  inDoubtStartsPerPhase?: number;
  /** The module's session TTL (expirySeconds × 1000). */
  sessionTtlMs: number;
  /** How long to wait for the reconciler to drain after the clocks moved. */
  settleTimeoutMs: number;
  heapSampleEveryMs?: number;
  /**
   * How often to count the store's entries while it forgets (until two counts agree): longer than
   * the store's sweep interval, or two counts between sweeps agree too early. Default 1500 ms.
   */
  forgetPollMs?: number;
  log?: (line: string) => void;
}

/** Runs `each` over `items`, at most `limit` at a time. */
async function inParallel<T>(
  items: readonly T[],
  limit: number,
  each: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await each(items[next++]!);
    }),
  );
}

/** One verification as a user lived it. */
interface Journey {
  phone: string;
  method: string;
  plan: Plan;
  handle?: string;
  requestId?: string;
  startAnswers: number[];
}

type Plan = 'verify' | 'wrong-codes' | 'abandon' | 'fail';

export interface SoakReport {
  journeys: number;
  started: number;
  startRefusals: Record<string, number>;
  requests: Record<string, number>;
  faultsInjected: number;
  sessionsByStatus: Record<string, number>;
  /** Problems found; empty when every invariant held. */
  violations: string[];
  /**
   * Money: the balance's drop, what the charged sessions cost, the costs the API reported to the
   * module, and the charges of in-doubt sessions no webhook revealed (the module never learnt them).
   */
  money: {
    balanceDrop: number;
    charged: number;
    recorded: number;
    unrevealed: number;
    chargedSessions: number;
  };
  /** Sessions the API made for starts the module answered 503 (time-outs), and how many were adopted. */
  inDoubt: { sessions: number; adopted: number };
  /** Settled heap after the warm-up, after the first half and after the second half (each once its sessions were gone). */
  heap: {
    baseline: number;
    afterFirstHalf: number;
    final: number;
    samples: { atMs: number; heapUsed: number; storeEntries: number }[];
  };
  storeEntries: { baseline: number; final: number; peak: number };
  wallMs: number;
}

const METHODS = ['reverse_flash_call', 'flash_call', 'msgr1_otp', 'msgr2_bot', 'sms', 'operator_id'];
const PLANS: [Plan, number][] = [
  ['verify', 5],
  ['wrong-codes', 1],
  ['abandon', 2],
  ['fail', 1],
];
const TERMINAL_EVENT: Record<string, string> = {
  verified: 'verification.verified',
  failed: 'verification.failed',
  expired: 'verification.expired',
};
const DAY_MS = 86_400_000;

export async function runSoak(target: SoakTarget, options: SoakOptions): Promise<SoakReport> {
  const startedAt = Date.now();
  const log = options.log ?? (() => undefined);
  const { control } = target;
  const journeys: Journey[] = [];
  const violations: string[] = [];
  const requests: Record<string, number> = {};
  const startRefusals: Record<string, number> = {};
  let faultsInjected = 0;
  let inDoubtToForce = 0;
  const phones = new PhoneNumbers();
  let userSeq = 0;

  const violation = (text: string): void => {
    if (violations.length < 50) violations.push(text);
  };
  const random = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
  const think = (): Promise<void> => new Promise((r) => setTimeout(r, 5 + Math.random() * 40));

  await control.updateAccount(target.apiKey, {
    webhookUrl: `${target.hostUrl}/verification/webhooks`,
    balance: 10_000_000,
  });
  await control.clearFaults();
  await control.addFault({ webhooks: { dropRate: options.webhookLossRate } });

  /** A start the API processes after the module gave up on it: an in-doubt start. */
  const pastTimeOut = (): number => options.apiTimeoutMs + 100 + Math.floor(Math.random() * 400);

  /** One-shot fault on the API route the next call will use, `faultRate` of the time. */
  const maybeFault = async (route: string): Promise<void> => {
    if (route === 'POST /v1/verify' && inDoubtToForce > 0) {
      inDoubtToForce--;
      faultsInjected++;
      await control.addFault({ route, kind: 'latency', count: 1, latencyMs: pastTimeOut() });
      return;
    }
    if (Math.random() >= options.faultRate) return;
    faultsInjected++;
    const post = route.startsWith('POST');
    const kind = random(['status', 'status', 'reset', 'garbage', 'html', 'empty', 'latency'] as const);
    const fault: SandboxControlRouteFault = {
      route: route as SandboxControlRouteFault['route'],
      kind,
      count: 1,
    };
    if (kind === 'status') {
      fault.status = random([500, 502, 503, 429]);
      fault.retryAfterS = 1;
    }
    // A POST past the time-out is processed after the module gave up: an in-doubt start, whose session
    // the module adopts if a webhook reveals it. A third of the POST latencies go past it.
    if (kind === 'latency')
      fault.latencyMs = !post
        ? 50 + Math.floor(Math.random() * options.apiTimeoutMs * 1.5)
        : Math.random() < 1 / 3
          ? pastTimeOut()
          : 20 + Math.floor(Math.random() * (options.apiTimeoutMs / 4));
    await control.addFault(fault);
  };

  const client = async (
    label: string,
    method: 'GET' | 'POST',
    path: string,
    user: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await soakFetch(`${target.hostUrl}${path}`, {
      method,
      headers: { 'x-soak-user': user, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).catch((error: Error) => {
      // Names the host route that failed at the socket (a sandbox control call fails unnamed).
      throw Object.assign(new Error(`host ${label}: ${error.message}`), { cause: error.cause });
    });
    const text = await res.text();
    requests[`${label} ${res.status}`] = (requests[`${label} ${res.status}`] ?? 0) + 1;
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      violation(`${label} answered ${res.status} with a body that is not JSON`);
    }
    const problem = /^application\/problem\+json/.test(res.headers.get('content-type') ?? '');
    if (res.status >= 500 && !(res.status === 503 && parsed.error_code === 'service_unavailable'))
      violation(`${label} answered ${res.status} ${text.slice(0, 120)}`);
    if (res.status >= 400 && !problem)
      violation(`${label} answered ${res.status} without a problem document`);
    return { status: res.status, body: parsed };
  };

  const poll = async (journey: Journey, user: string, times: number): Promise<void> => {
    for (let i = 0; i < times; i++) {
      await maybeFault('GET /v1/verify/:id');
      const res = await client('status', 'GET', `/verification/status/${journey.handle}`, user);
      if (res.status !== 200) violation(`status of a started session answered ${res.status}`);
      await think();
    }
  };

  const check = async (journey: Journey, user: string, code: string): Promise<number> => {
    let res;
    for (let attempt = 0; attempt < 3; attempt++) {
      await maybeFault('POST /v1/verify/check');
      res = await client('check', 'POST', '/verification/check', user, {
        verification_id: journey.handle,
        code,
      });
      if (res.status !== 503 && res.status !== 429) break;
      await think();
    }
    return res!.status;
  };

  const journey = async (): Promise<void> => {
    const user = `soak-user-${userSeq++}`;
    const weights = PLANS.reduce((n, [, w]) => n + w, 0);
    let pickPlan = Math.random() * weights;
    const plan = PLANS.find(([, w]) => (pickPlan -= w) < 0)![0];
    const j: Journey = { phone: phones.take(), method: random(METHODS), plan, startAnswers: [] };
    journeys.push(j);
    if (Math.random() < 0.1) await client('methods', 'GET', '/verification/methods', user);

    const startOnce = async () => {
      await maybeFault('POST /v1/verify');
      return client('start', 'POST', '/verification/start', user, {
        phone_number: j.phone,
        method: j.method,
      });
    };
    let started;
    for (let attempt = 0; attempt < 2 && !started; attempt++) {
      // A double-click: two identical starts at once must make one paid initiation.
      const answers =
        Math.random() < 0.2 ? await Promise.all([startOnce(), startOnce()]) : [await startOnce()];
      for (const a of answers) j.startAnswers.push(a.status);
      // (Each answer seals its own handle, so two handles may name one session: the count below decides.)
      const ok = answers.filter((a) => a.status === 201);
      started = ok[0];
      if (!started)
        for (const a of answers)
          startRefusals[String(a.body.error_code ?? a.status)] =
            (startRefusals[String(a.body.error_code ?? a.status)] ?? 0) + 1;
      else await think();
    }
    if (!started) return;
    j.handle = started.body.verification_id as string;
    const sessions = await control.sessionsFor(j.phone);
    if (sessions.length !== 1) violation(`${sessions.length} upstream sessions for one start of ${j.phone}`);
    const session = sessions[0];
    if (!session) return;
    j.requestId = session.requestId;
    await poll(j, user, 1 + Math.floor(Math.random() * 2));

    const rid = session.requestId;
    const codeOf = async (s: SandboxControlSession): Promise<string> =>
      s.code ?? (await control.getSession(rid)).code ?? '000000';
    const wrong = (code: string): string => code.replace(/\d/g, (d) => String((Number(d) + 1) % 10));
    let plan2: Plan = plan;
    if (plan2 === 'wrong-codes' && j.method === 'reverse_flash_call') plan2 = 'fail';
    switch (plan2) {
      case 'verify':
        if (j.method === 'reverse_flash_call') await control.call(rid, j.phone);
        else if (j.method === 'msgr2_bot')
          await check(j, user, await codeOf(await control.share(rid, j.phone)));
        else if (j.method === 'operator_id') {
          if (Math.random() < 0.5) await control.operator(rid, 'approve');
          else await check(j, user, await codeOf(await control.operator(rid, 'fallback')));
        } else await check(j, user, await codeOf(await control.deliver(rid)));
        break;
      case 'wrong-codes': {
        const ready =
          j.method === 'msgr2_bot'
            ? await control.share(rid, j.phone)
            : j.method === 'operator_id'
              ? await control.operator(rid, 'fallback')
              : await control.deliver(rid);
        const bad = wrong(await codeOf(ready));
        for (let i = 0; i < 3; i++) await check(j, user, bad);
        break;
      }
      case 'fail':
        await control.fail(rid);
        break;
      case 'abandon':
        break;
    }
    await poll(j, user, Math.floor(Math.random() * 3));
  };

  const traffic = async (ms: number): Promise<void> => {
    const until = Date.now() + ms;
    await Promise.all(
      Array.from({ length: options.users }, async () => {
        while (Date.now() < until) {
          try {
            await journey();
          } catch (error) {
            // undici's "fetch failed" says nothing by itself: its cause names the socket error.
            const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause;
            const detail = cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : '';
            violation(`a journey failed: ${(error as Error).message}${detail}`);
          }
        }
      }),
    );
  };

  /** Moves both clocks past every session's expiry and waits for the reconciler to settle them. */
  const settle = async (): Promise<void> => {
    await control.clearFaults();
    await control.addFault({ webhooks: { dropRate: options.webhookLossRate } });
    await target.advanceClock(options.sessionTtlMs + 5_000);
    const deadline = Date.now() + options.settleTimeoutMs;
    while ((await target.reconcileQueueSize()) > 0) {
      if (Date.now() > deadline) {
        violation(
          `the reconciler still had ${await target.reconcileQueueSize()} sessions after ${options.settleTimeoutMs} ms`,
        );
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    // Late webhook retries and in-flight emissions.
    await new Promise((r) => setTimeout(r, 1000));
  };

  /** Past the records' retention: the store sweeps them and the heap comes back. */
  const forget = async (): Promise<void> => {
    await target.advanceClock(DAY_MS + 3_600_000);
    const deadline = Date.now() + 30_000;
    let previous = -1;
    for (;;) {
      const entries = await target.storeEntries();
      if (entries === previous || Date.now() > deadline) break;
      previous = entries;
      await new Promise((r) => setTimeout(r, options.forgetPollMs ?? 1500));
    }
  };

  const sessionsByStatus: Record<string, number> = {};
  const money = { balanceDrop: 0, charged: 0, recorded: 0, unrevealed: 0, chargedSessions: 0 };
  const inDoubt = { sessions: 0, adopted: 0 };
  let started = 0;

  /** The invariants over one phase's journeys, while the records are still kept. */
  const checkPhase = async (phaseJourneys: Journey[], balanceBefore: number): Promise<void> => {
    const events = await target.events();
    const begun = phaseJourneys.filter((j) => j.requestId);
    started += begun.length;
    const requestIds = new Set(begun.map((j) => j.requestId!));
    const costs = await target.recordedCosts([...requestIds]);
    let charged = 0;
    let recorded = 0;
    // Each journey is checked on its own (two reads); a few at a time, as the users ran them.
    await inParallel(begun, options.users, async (j) => {
      const session = await control.getSession(j.requestId!);
      sessionsByStatus[session.status] = (sessionsByStatus[session.status] ?? 0) + 1;
      const expected = TERMINAL_EVENT[session.status];
      const seen = events[j.requestId!] ?? [];
      const terminal = seen.filter((e) => Object.values(TERMINAL_EVENT).includes(e));
      if (!expected) violation(`${j.method} session still ${session.status} after its expiry`);
      else if (terminal.length !== 1 || terminal[0] !== expected)
        violation(
          `${j.method} session ${session.status} (${j.plan}): terminal events ${JSON.stringify(terminal)}`,
        );
      if (seen.filter((e) => e === 'verification.code_required').length > 1)
        violation('code_required emitted twice');
      if (seen.includes('verification.code_required') && j.method !== 'operator_id')
        violation(`code_required for a ${j.method} session`);
      const view = await client('status', 'GET', `/verification/status/${j.handle}`, 'soak-final');
      if (view.body.status !== session.status)
        violation(
          `the module shows ${String(view.body.status)} for a session the API shows ${session.status}`,
        );
      if (session.charged) {
        money.chargedSessions++;
        charged += session.cost.amount;
        const cost = costs[j.requestId!];
        if (cost === null || cost === undefined) violation('a charged session without a recorded cost');
        else recorded += cost;
      }
    });
    // Starts the module answered without a session: an in-doubt start (503 after a time-out) may still
    // have made one upstream. It must be the only one, and either adopted (its first delivered webhook
    // revealed it: then exactly one matching terminal event and its cost recorded) or never revealed
    // (every webhook of it lost). Its charge is real either way.
    let unrevealed = 0;
    for (const j of phaseJourneys.filter((x) => !x.requestId)) {
      const orphans = await control.sessionsFor(j.phone);
      if (orphans.length === 0) continue;
      const orphan = orphans[0]!;
      if (orphans.length > 1 || !j.startAnswers.includes(503)) {
        violation(
          `the API made ${orphans.length} ${j.method} session(s) (charged: ${orphans.map((o) => o.charged).join(',')}) for a start the module answered ${j.startAnswers.join(',')}`,
        );
        continue;
      }
      inDoubt.sessions++;
      const seen = (events[orphan.requestId] ?? []).filter((e) => Object.values(TERMINAL_EVENT).includes(e));
      const adopted = (await control.webhookLog(orphan.requestId)).some((d) => d.status === 200);
      if (adopted) {
        inDoubt.adopted++;
        requestIds.add(orphan.requestId);
        if (seen.length !== 1 || seen[0] !== TERMINAL_EVENT[orphan.status])
          violation(`adopted ${j.method} session ${orphan.status}: terminal events ${JSON.stringify(seen)}`);
      } else if (seen.length > 0) violation(`events for an in-doubt session no webhook revealed`);
      if (orphan.charged) {
        money.chargedSessions++;
        charged += orphan.cost.amount;
        if (!adopted) unrevealed += orphan.cost.amount;
        else {
          const cost = (await target.recordedCosts([orphan.requestId]))[orphan.requestId];
          if (cost === null || cost === undefined)
            violation('an adopted charged session without a recorded cost');
          else recorded += cost;
        }
      }
    }
    for (const requestId of Object.keys(events))
      if (!requestIds.has(requestId)) violation(`events for a session no journey started: ${requestId}`);
    const balanceDrop = balanceBefore - (await control.getAccount(target.apiKey)).balance.amount;
    const cents = (n: number): number => Math.round(n * 100);
    if (cents(balanceDrop) !== cents(charged) || cents(charged) !== cents(recorded + unrevealed))
      violation(
        `money: the balance dropped ${balanceDrop}, charged sessions cost ${charged}, the API reported ${recorded} (+${unrevealed} in doubt, never revealed)`,
      );
    money.balanceDrop += balanceDrop;
    money.charged += charged;
    money.recorded += recorded;
    money.unrevealed += unrevealed;
    await target.clearEvents();
  };

  /** One phase of traffic, then every session settled, checked and forgotten: the heap after it. */
  const phase = async (
    ms: number,
    label: string,
  ): Promise<{ heap: number; entries: number; peak: number }> => {
    log(`soak: ${label}: ${ms} ms of traffic, ${options.users} users`);
    inDoubtToForce = options.inDoubtStartsPerPhase ?? 6;
    const balance = (await control.getAccount(target.apiKey)).balance.amount;
    let peak = 0;
    let sampling = true;
    let wake = (): void => undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const sampler = (async () => {
      while (sampling) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, options.heapSampleEveryMs ?? 15_000);
        });
        if (!sampling) break;
        const sample = {
          atMs: Date.now() - startedAt,
          heapUsed: await target.heapUsed(),
          storeEntries: await target.storeEntries(),
        };
        samples.push(sample);
        peak = Math.max(peak, sample.storeEntries);
      }
    })();
    await traffic(ms);
    sampling = false;
    clearTimeout(timer);
    wake();
    await sampler;
    peak = Math.max(peak, await target.storeEntries());
    log(`soak: ${label}: settling ${journeys.length} journeys`);
    await settle();
    await checkPhase(journeys, balance);
    await forget();
    const eventsAfter = await target.events();
    if (Object.keys(eventsAfter).length > 0)
      violation(`events after the sessions had settled: ${JSON.stringify(eventsAfter).slice(0, 200)}`);
    journeyCount += journeys.length;
    journeys.length = 0;
    return { heap: await target.heapUsed(), entries: await target.storeEntries(), peak };
  };

  const samples: SoakReport['heap']['samples'] = [];
  let journeyCount = 0;
  // The warm-up fills what is bounded by design (JIT code, parser and socket pools, caches); the
  // two halves after it must then leave the heap where the first left it.
  const warm = await phase(options.warmupMs, 'warm-up');
  const first = await phase(options.durationMs / 2, 'first half');
  const second = await phase(options.durationMs / 2, 'second half');
  return {
    journeys: journeyCount,
    started,
    startRefusals,
    requests,
    faultsInjected,
    sessionsByStatus,
    violations,
    money,
    inDoubt,
    heap: { baseline: warm.heap, afterFirstHalf: first.heap, final: second.heap, samples },
    storeEntries: { baseline: warm.entries, final: second.entries, peak: Math.max(first.peak, second.peak) },
    wallMs: Date.now() - startedAt,
  };
}
