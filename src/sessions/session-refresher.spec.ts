import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { VerificationSession } from '../api/api.types.js';
import type { VerificationApiClient } from '../api/verification-api.client.js';
import { VerificationApiError } from '../api/verification-api.error.js';
import type { SessionRecord } from '../core/session-record.js';
import type { VerificationEvent } from '../core/verification-events.js';
import type { VerificationTelemetry } from '../observability/verification-telemetry.js';
import type { VerificationModuleOptions } from '../options/verification.options.js';
import type { SpanFacts } from '../observability/verification-tracing.js';
import { MemoryStore } from '../store/memory.store.js';
import { observedSms, pendingSms, trackerOver } from '../../test/support/tracker.fixture.js';
import { RECORD_RETENTION_MS } from './session-record.repository.js';
import { GONE_SESSION_TTL_MS, SessionRefresher, UNKNOWN_SESSION_TTL_MS } from './session-refresher.js';

/**
 * What a status poll, a cancel's read and a lost record's rebuild cost upstream and answer: one GET per
 * session per poll interval across the instances sharing a store, a refused meter spending nothing, a
 * session the API does not know remembered, and a rebuilt record that is its owner's and its journey's.
 */
const START = 1_700_000_000_000;
const SMS_POLL_MS = 2500;

describe('SessionRefresher: upstream reads and rebuilt records', () => {
  let now: number;
  let store: MemoryStore;
  let answers: Map<string, VerificationSession | Error>;
  let gets: string[];
  let received: { name: string; source: string }[];
  let spans: { name: string; facts: SpanFacts | undefined; set: SpanFacts }[];
  let logged: { message: string; fields: unknown }[];

  const api = {
    getSession: async (requestId: string): Promise<VerificationSession> => {
      gets.push(requestId);
      const answer = answers.get(requestId);
      if (answer === undefined) throw new VerificationApiError({ operation: 'getSession', status: 404 });
      if (answer instanceof Error) throw answer;
      return answer;
    },
  } as unknown as VerificationApiClient;

  /** One instance of the module over the shared store: its records, tracker and refresher. */
  function instance(options: Partial<VerificationModuleOptions> = {}) {
    const made = trackerOver(store, () => now, { options });
    made.emitter.onAny(
      (event, payload) =>
        void received.push({ name: String(event), source: (payload as VerificationEvent).source }),
    );
    const telemetry = {
      span: (
        name: string,
        operation: (span: { set(facts: SpanFacts): void }) => Promise<unknown>,
        facts?: SpanFacts,
      ) => {
        const span = { name, facts, set: {} as SpanFacts };
        spans.push(span);
        return operation({ set: (more) => Object.assign(span.set, more) });
      },
      logger: { log: (message: string, fields?: unknown) => void logged.push({ message, fields }) },
    } as unknown as VerificationTelemetry;
    const refresher = new SessionRefresher(made.options, store, api, made.records, made.tracker, telemetry);
    return { ...made, refresher };
  }

  function answer(status: VerificationSession['status'], fields: Partial<VerificationSession> = {}): void {
    const session = observedSms(START, status, fields);
    answers.set(session.requestId, session);
  }

  beforeEach(() => {
    now = START;
    store = new MemoryStore({ clock: () => now });
    answers = new Map();
    gets = [];
    received = [];
    spans = [];
    logged = [];
  });
  afterEach(() => store.close());

  describe('refresh: one GET per session per poll interval', () => {
    const pending: SessionRecord = pendingSms(START);

    it('a terminal record is answered as stored, without a GET', async () => {
      const { refresher } = instance();
      const verified = { ...pending, status: 'verified' as const, verifiedAt: START };
      expect(await refresher.refresh(verified)).toBe(verified);
      expect(gets).toStrictEqual([]);
    });

    it('reads the API once, names the read in its span, and emits what it saw as a poll', async () => {
      const { records, refresher } = instance();
      await records.save(pending);
      answer('verified', { verifiedAt: new Date(START + 900) });
      expect((await refresher.refresh(pending)).status).toBe('verified');
      expect(gets).toStrictEqual(['req-1']);
      expect(spans).toStrictEqual([
        { name: 'status_refresh', facts: { method: 'sms' }, set: { outcome: 'verified', test: false } },
      ]);
      expect(received.map((event) => [event.name, event.source])).toStrictEqual([
        ['verification.verified', 'poll'],
      ]);
    });

    it('a poll that comes while this process’s GET is in flight waits for its answer, not the record it holds', async () => {
      const { records, refresher } = instance();
      await records.save(pending);
      let answerNow!: () => void;
      const held = new Promise<void>((resolve) => (answerNow = resolve));
      const getSession = api.getSession;
      api.getSession = async (requestId) => (await held, getSession(requestId));
      try {
        answer('verified', { verifiedAt: new Date(START + 900) });
        const first = refresher.refresh(pending);
        while (!spans.length) await new Promise((resolve) => setImmediate(resolve));
        now = START + 100;
        const second = refresher.refresh(pending);
        answerNow();
        expect((await second).status).toBe('verified');
        expect((await first).status).toBe('verified');
      } finally {
        api.getSession = getSession;
      }
    });

    it('concurrent polls in one process share one GET; a poll inside the claim costs no GET, the next interval one', async () => {
      const { records, refresher } = instance();
      await records.save(pending);
      answer('sent');
      const [first, second] = await Promise.all([refresher.refresh(pending), refresher.refresh(pending)]);
      expect(first).toStrictEqual(second);
      expect(gets).toHaveLength(1);
      now = START + SMS_POLL_MS - 1;
      expect(await refresher.refresh(pending)).toBe(pending);
      expect(gets).toHaveLength(1);
      now = START + SMS_POLL_MS;
      await refresher.refresh(pending);
      expect(gets).toHaveLength(2);
    });

    it('a poll inside this process’s own claim does not ask the store either', async () => {
      const { records, refresher } = instance();
      await records.save(pending);
      answer('sent');
      await refresher.refresh(pending);
      const claims: string[] = [];
      const setIfAbsent = store.setIfAbsent.bind(store);
      store.setIfAbsent = (key, ...rest) => (claims.push(key), setIfAbsent(key, ...rest));
      now = START + 1000;
      await refresher.refresh(pending);
      expect(claims).toStrictEqual([]);
    });

    it('another instance inside the interval gets the stored record, as the claimer left it', async () => {
      const first = instance();
      const second = instance();
      await first.records.save(pending);
      answer('verified', { verifiedAt: new Date(START + 900) });
      await first.refresher.refresh(pending);
      now = START + 1000;
      const seen = await second.refresher.refresh(pending);
      expect(seen.status).toBe('verified');
      expect(gets).toHaveLength(1);
      // With no record stored, the caller's own comes back.
      const lost = { ...pending, requestId: 'req-9' };
      await store.setIfAbsent(SessionRefresher.pollClaimKey('req-9'), '1', SMS_POLL_MS);
      expect(await second.refresher.refresh(lost)).toBe(lost);
    });

    it('a meter that refuses: the record as stored, no GET, and the interval left for the next caller', async () => {
      const first = instance();
      const second = instance();
      await first.records.save(pending);
      answer('sent');
      expect(await first.refresher.refresh(pending, 'poll', async () => false)).toBe(pending);
      expect(gets).toStrictEqual([]);
      await second.refresher.refresh(pending, 'poll', async () => true);
      expect(gets).toStrictEqual(['req-1']);
    });

    it('with the status cache off, every poll asks the API, unless its meter refuses', async () => {
      const { records, refresher } = instance({ statusCache: { enabled: false } });
      await records.save(pending);
      answer('sent');
      await refresher.refresh(pending);
      await refresher.refresh(pending);
      expect(gets).toHaveLength(2);
      expect(await refresher.refresh(pending, 'poll', async () => false)).toBe(pending);
      expect(gets).toHaveLength(2);
      await refresher.refresh(pending, 'poll', async () => true);
      expect(gets).toHaveLength(3);
    });

    it('readNow reads past the claim and does not fail on a listener', async () => {
      const { records, refresher, emitter } = instance();
      await records.save(pending);
      answer('sent');
      await refresher.refresh(pending);
      answer('verified', { verifiedAt: new Date(START + 900) });
      emitter.on('verification.verified', () => Promise.reject(new Error('listener down')));
      now = START + 10;
      expect((await refresher.readNow(pending)).status).toBe('verified');
      expect(gets).toStrictEqual(['req-1', 'req-1']);
      expect(received.map((event) => event.source)).toStrictEqual(['poll']);
    });
  });

  describe('recover: a record the store lost, rebuilt from its handle', () => {
    it('is its owner’s, as at start, and goes on the reconciler’s queue; one line says so', async () => {
      const { refresher, records } = instance();
      answer('sent');
      const rebuilt = await refresher.recover('req-1', 'user-7');
      expect(rebuilt).toMatchObject({ requestId: 'req-1', owner: 'user-7', status: 'sent', rebuilt: true });
      expect(rebuilt).not.toHaveProperty('journeyId');
      expect(await records.get('req-1')).toMatchObject({ owner: 'user-7' });
      expect(await records.queue.size()).toBe(1);
      expect(logged).toStrictEqual([
        {
          message: 'session record rebuilt from its handle and the API (the store had lost it)',
          fields: { request_id: 'req-1', method: 'sms' },
        },
      ]);
    });

    it('a later step of a journey keeps its journey; a journey’s first step names none', async () => {
      const { refresher } = instance();
      answer('sent');
      expect(await refresher.recover('req-1', 'user-7', 'req-0')).toMatchObject({ journeyId: 'req-0' });
      store = new MemoryStore({ clock: () => now });
      const again = instance();
      expect(await again.refresher.recover('req-1', 'user-7', 'req-1')).not.toHaveProperty('journeyId');
    });

    it('what became due while the store had lost it is emitted once, as seen by a poll', async () => {
      const { refresher } = instance();
      answer('verified', { verifiedAt: new Date(START + 900) });
      await refresher.recover('req-1', 'user-7');
      await refresher.recover('req-1', 'user-7');
      expect(received).toStrictEqual([{ name: 'verification.verified', source: 'poll' }]);
    });

    it('a store that fails while the rebuilt record is observed: the failure, not a record', async () => {
      const { refresher, tracker } = instance();
      answer('sent');
      const down = new Error('store down');
      tracker.observe = () => Promise.reject(down);
      await expect(refresher.recover('req-1', 'u')).rejects.toBe(down);
    });

    it('concurrent rebuilds share one GET', async () => {
      const { refresher } = instance();
      answer('sent');
      const [a, b] = await Promise.all([refresher.recover('req-1', 'u'), refresher.recover('req-1', 'u')]);
      expect(a).toStrictEqual(b);
      expect(gets).toStrictEqual(['req-1']);
    });

    it('a session the API does not know: null, and no GET for it for a minute; other sessions still asked', async () => {
      const { refresher } = instance();
      expect(await refresher.recover('req-404', 'u')).toBeNull();
      now = START + UNKNOWN_SESSION_TTL_MS - 1;
      expect(await refresher.recover('req-404', 'u')).toBeNull();
      expect(await refresher.knownUnknown('req-404')).toBe(true);
      expect(await refresher.knownUnknown('req-1')).toBe(false);
      answer('sent');
      expect(await refresher.recover('req-1', 'u')).not.toBeNull();
      expect(gets).toStrictEqual(['req-404', 'req-1']);
      now = START + UNKNOWN_SESSION_TTL_MS;
      await refresher.recover('req-404', 'u');
      expect(gets).toStrictEqual(['req-404', 'req-1', 'req-404']);
    });

    it('an API that could not answer: its error, and nothing remembered', async () => {
      const { refresher } = instance();
      const outage = new VerificationApiError({ operation: 'getSession', status: 503 });
      answers.set('req-1', outage);
      await expect(refresher.recover('req-1', 'u')).rejects.toBe(outage);
      answers.set('req-1', new TypeError('fetch failed'));
      await expect(refresher.recover('req-1', 'u')).rejects.toThrow('fetch failed');
      expect(await refresher.knownUnknown('req-1')).toBe(false);
    });

    it('a session past its record’s retention stays unknown for as long as a record is kept', async () => {
      const { refresher } = instance();
      const expiresAt = START + 300_000;
      answer('expired');
      now = expiresAt + RECORD_RETENTION_MS - 1;
      expect(await refresher.recover('req-1', 'u')).not.toBeNull();
      store = new MemoryStore({ clock: () => now });
      const later = instance();
      now = expiresAt + RECORD_RETENTION_MS;
      expect(await later.refresher.recover('req-1', 'u')).toBeNull();
      now += GONE_SESSION_TTL_MS - 1;
      expect(await later.refresher.recover('req-1', 'u')).toBeNull();
      expect(gets).toHaveLength(2);
    });

    it('a record another instance stored meanwhile stands', async () => {
      const { refresher, records } = instance();
      answer('sent');
      const theirs = pendingSms(START, { owner: 'user-theirs' });
      const saveIfAbsent = records.saveIfAbsent.bind(records);
      records.saveIfAbsent = async (record) => (await records.save(theirs), saveIfAbsent(record));
      expect(await refresher.recover('req-1', 'user-7')).toMatchObject({ owner: 'user-theirs' });
      expect(logged).toStrictEqual([]);
    });

    it('verified without the API’s time: verified at an unknown time, not the rebuild’s', async () => {
      const { refresher, records } = instance();
      answer('verified');
      now = START + 60_000;
      expect(await refresher.recover('req-1', 'u')).toMatchObject({ status: 'verified', verifiedAt: null });
      expect(await records.get('req-1')).toMatchObject({ verifiedAt: null });
      const other = instance();
      answers.set(
        'req-2',
        observedSms(START, 'verified', { requestId: 'req-2', verifiedAt: new Date(START + 900) }),
      );
      expect(await other.refresher.recover('req-2', 'u')).toMatchObject({ verifiedAt: START + 900 });
    });

    it('a failing listener: the rebuilt record stands and its event comes again', async () => {
      const { refresher, emitter, records, tracker } = instance();
      answer('verified', { verifiedAt: new Date(START + 900) });
      emitter.on('verification.verified', () => Promise.reject(new Error('listener down')));
      const stood = await refresher.recover('req-1', 'u');
      expect(stood).toMatchObject({ requestId: 'req-1', owner: 'u', status: 'verified' });
      expect(stood).toStrictEqual(await records.get('req-1'));
      // The claim was released: the next observation emits it again.
      emitter.removeAllListeners('verification.verified');
      await tracker.observe(observedSms(START, 'verified', { verifiedAt: new Date(START + 900) }), 'poll');
      expect(received.filter((event) => event.name === 'verification.verified')).toHaveLength(2);
    });
  });
});
