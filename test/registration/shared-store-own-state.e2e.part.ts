/**
 * A named registration's own state on a store several registrations share: one store instance the host
 * gave both (Memory and Redis), beside the shared keyPrefix of test/attacks/registrations-shared-prefix-
 * reconcile. Each registration's reconcile queue holds only its own sessions (north's stays empty after
 * south's start), south's verified outcome is emitted though north's reconciler ran first, and each
 * registration's status stream is pushed its own session's change (its notices on its own channel), and
 * each registration's history holds only its own verifications' outcomes (the event bus is one), the
 * unnamed registration's beside a named one's too; and one registration's erasure of an owner or a number
 * (under one data key for both) leaves the other's history of them.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Registry } from 'prom-client';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import {
  getVerificationToken,
  InjectVerificationHistory,
} from '../../src/module/verification-registration.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { openSse, type SseStream } from '../support/sse-client.js';
import { call, type TestApp } from '../support/verification-app.js';
import {
  bootTwoRegistrations,
  northReconcilesFirst,
  phoneNumber,
  reconcilerOf,
  startOn,
  verifiedBy,
} from './two-registrations.js';

describe('registrations on one store keep their own state', () => {
  const suite = sandboxSuite();
  let store: VerificationStore | undefined;
  const streams: SseStream[] = [];
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await store?.close();
    store = undefined;
  });

  /** A host's class given the unnamed registration's history, as a host injects it. */
  @Injectable()
  class UnnamedHistory {
    constructor(@InjectVerificationHistory() readonly history: VerificationHistory) {}
  }

  const historyOf = (host: TestApp, registration: string | undefined): VerificationHistory =>
    registration === undefined
      ? host.app.get(UnnamedHistory, { strict: false }).history
      : host.app.get<VerificationHistory>(getVerificationToken(VerificationHistory, registration), {
          strict: false,
        });

  /** Starts an SMS on the routes of `name` for user `sue` and enters its code: the session's request id. */
  async function verifyOn(host: TestApp, name: string, phone: string): Promise<string> {
    const id = await startOn(host, name, phone, 'sms');
    const requestId = suite.sb.sessionsFor(phone)[0]!.request_id;
    await suite.sb.deliver(requestId);
    const checked = await call(
      host.url,
      'POST',
      `/${name}/verification/check`,
      { verification_id: id, code: suite.sb.getSession(requestId)!.code as string },
      { 'x-user': 'sue' },
    );
    expect(checked.body).toMatchObject({ verified: true });
    return requestId;
  }

  /** What a registration's history holds of a verification, by its number and by its owner `sue`. */
  async function entriesOf(
    history: VerificationHistory,
    phone: string,
    requestId: string,
  ): Promise<(string | undefined)[][]> {
    return [...(await history.list({ phoneNumber: phone })), ...(await history.list({ owner: 'sue' }))]
      .filter((e) => e.requestId === requestId || e.phoneNumber === phone)
      .map((e) => [e.kind, e.status ?? e.check]);
  }

  describe.each([
    ['one MemoryStore instance', () => new MemoryStore({ clock: () => suite.sb.now() })],
    [
      'one RedisStore instance',
      () =>
        new RedisStore({
          url: sharedRedisUrl(),
          keyPrefix: `pv-one:${randomUUID()}:`,
          clock: () => suite.sb.now(),
        }),
    ],
  ])('two named registrations given %s', (_label, make: () => VerificationStore) => {
    it("each reconciler follows only its own sessions; south's verified outcome is emitted", async () => {
      const shared = (store = make());
      const booted = await bootTwoRegistrations(suite.sb, () => shared);
      const host = (suite.host = booted.app);
      const [north, south] = booted.names;
      const phone = phoneNumber();
      await startOn(host, south, phone);
      expect(await reconcilerOf(host, north).pending()).toBe(0);
      expect(await reconcilerOf(host, south).pending()).toBe(1);
      const requestId = suite.sb.sessionsFor(phone)[0]!.request_id;
      await northReconcilesFirst(suite.sb, booted, requestId, phone);
      expect(verifiedBy(host, requestId)).toEqual([south]);
    });

    it("each registration's status stream is pushed its own session's verification, while the other's waits", async () => {
      const shared = (store = make());
      const booted = await bootTwoRegistrations(suite.sb, () => shared);
      const host = (suite.host = booted.app);
      const sessions = await Promise.all(
        booted.names.map(async (name) => {
          const phone = phoneNumber();
          const id = await startOn(host, name, phone, 'sms');
          const opened = await openSse(`${host.url}/${name}/verification/status/${id}/events`, {
            'x-user': 'sue',
          });
          expect(opened.status).toBe(200);
          streams.push(opened.stream!);
          await opened.stream!.statusCount(1);
          return { name, id, requestId: suite.sb.sessionsFor(phone)[0]!.request_id, stream: opened.stream! };
        }),
      );
      const [north, south] = sessions as [(typeof sessions)[0], (typeof sessions)[0]];
      const enterCode = async (session: typeof north) => {
        await suite.sb.deliver(session.requestId);
        const code = suite.sb.getSession(session.requestId)!.code as string;
        const checked = await call(
          host.url,
          'POST',
          `/${session.name}/verification/check`,
          { verification_id: session.id, code },
          { 'x-user': 'sue' },
        );
        expect(checked.body).toMatchObject({ verified: true });
      };

      await enterCode(north);
      await north.stream.ends();
      expect(north.stream.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
      expect(south.stream.isEnded).toBe(false);
      expect(south.stream.statuses().map((x) => x.status)).toEqual(['sent']);

      await enterCode(south);
      await south.stream.ends();
      expect(south.stream.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
    });

    it("each registration's history holds its own verification's outcome, never the other's", async () => {
      const shared = (store = make());
      const booted = await bootTwoRegistrations(suite.sb, () => shared, { history: {} });
      const host = (suite.host = booted.app);
      const [north, south] = booted.names;
      const phone = phoneNumber();
      const requestId = await verifyOn(host, north, phone);
      expect(verifiedBy(host, requestId)).toEqual([north]);

      const outcome = expect.arrayContaining([['outcome', 'verified']]);
      expect(await entriesOf(historyOf(host, north), phone, requestId)).toEqual(outcome);
      expect(await entriesOf(historyOf(host, south), phone, requestId)).toEqual([]);
    });

    it("a registration's erasure of an owner, or of a number, leaves the other registration's history of them", async () => {
      const shared = (store = make());
      // One data key the host gives both: the same number and owner digest alike in each.
      const dataKey = `data-key-${randomUUID()}`;
      const booted = await bootTwoRegistrations(suite.sb, () => shared, { history: {}, dataKey });
      const host = (suite.host = booted.app);
      const [north, south] = booted.names;
      // One number, one owner `sue`, verified on both registrations.
      const phone = phoneNumber();
      const viaNorth = await verifyOn(host, north, phone);
      await suite.sb.advance(61_000);
      const viaSouth = await verifyOn(host, south, phone);
      const southBefore = await entriesOf(historyOf(host, south), phone, viaSouth);
      expect(southBefore).toEqual(expect.arrayContaining([['outcome', 'verified']]));

      await historyOf(host, north).forget({ owner: 'sue' });
      await historyOf(host, north).forget({ phoneNumber: phone });
      expect(await entriesOf(historyOf(host, north), phone, viaNorth)).toEqual([]);
      expect(await entriesOf(historyOf(host, south), phone, viaSouth)).toEqual(southBefore);
      expect((await historyOf(host, south).list({ owner: 'sue' })).map((e) => e.phoneNumber)).toContain(
        phone,
      );
    });

    it("one prom-client registry the host gives both: a verification is counted once, by its own registration's metrics", async () => {
      const shared = (store = make());
      const registry = new Registry();
      const booted = await bootTwoRegistrations(suite.sb, () => shared, {
        metrics: { enabled: true, registry },
      });
      const host = (suite.host = booted.app);
      const [north] = booted.names;
      const requestId = await verifyOn(host, north, phoneNumber());
      expect(verifiedBy(host, requestId)).toEqual([north]);
      // Both registrations hear the host's one event bus: only north's telemetry counts north's outcome.
      const outcomes = (await registry.getSingleMetric('verification_outcomes_total')!.get()).values;
      expect(outcomes.filter((v) => v.labels.status === 'verified').map((v) => v.value)).toEqual([1]);
    });

    it("north as the unnamed registration: its history and south's each hold their own verification's outcome, never the other's", async () => {
      const shared = (store = make());
      const booted = await bootTwoRegistrations(
        suite.sb,
        () => shared,
        { history: {} },
        { unnamedNorth: true, providers: [UnnamedHistory] },
      );
      const host = (suite.host = booted.app);
      const [unnamedRoutes, southRoutes] = booted.names;
      const [unnamed, south] = booted.registrations;
      expect(unnamed).toBeUndefined();
      const [unnamedPhone, southPhone] = [phoneNumber(), phoneNumber()];
      const viaUnnamed = await verifyOn(host, unnamedRoutes, unnamedPhone);
      const viaSouth = await verifyOn(host, southRoutes, southPhone);
      expect(verifiedBy(host, viaUnnamed)).toEqual([undefined]);
      expect(verifiedBy(host, viaSouth)).toEqual([south]);

      const outcome = expect.arrayContaining([['outcome', 'verified']]);
      expect(await entriesOf(historyOf(host, unnamed), unnamedPhone, viaUnnamed)).toEqual(outcome);
      expect(await entriesOf(historyOf(host, south), unnamedPhone, viaUnnamed)).toEqual([]);
      expect(await entriesOf(historyOf(host, south), southPhone, viaSouth)).toEqual(outcome);
      expect(await entriesOf(historyOf(host, unnamed), southPhone, viaSouth)).toEqual([]);
    });
  });
});
