/**
 * Attack (U3): an entry on its way when its number is erased finds the number's erasure mark changed once
 * it has landed, and erases the number's history again, whole. Whatever was written between the erasure's
 * answer and that landing goes too: a start made after the erasure answered (another person's, or the
 * same person's new account: a session the erasure kept, the module goes on following it) loses its entry
 * in the number's history and in its owner's, the trail support reads of a live session. One slow write
 * (a store's latency, a paused instance of two sharing the store) erases what came after the erasure.
 * Two instances on one store (MemoryStore shared, or one Redis): the first's write is held, the second
 * erases the number and then starts it for someone else.
 *
 * Expected: the erasure again takes what the first one may have missed (entries written up to its mark),
 * never an entry written after the erasure answered. Medium (history lost: a live session's start no
 * longer listed, its promotion on verification finds no start to copy).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { DataKeys } from '../../src/core/data-keys.js';
import { numberRing, ownerRing } from '../../src/history/history-rings.js';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../../src/options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';
import { gatedPairs, type GatedPair } from '../support/gated-stores.js';

// The writer's first count of the number ring's start shelf is held until released.
describe.each(gatedPairs('history-redo', /history:\{n:[^}]+\}:start:seq$/))(
  'history: an erasure redone by an entry that was on its way (two instances, %s)',
  (label, make) => {
    const suite = sandboxSuite();
    let stores: GatedPair | undefined;
    const hosts: TestApp[] = [];
    afterEach(async () => {
      stores?.writer.gate.release();
      for (const host of hosts.splice(0)) await host.close();
      await stores?.writer.close();
      if (stores?.eraser !== stores?.writer) await stores?.eraser.close();
      stores = undefined;
    });

    it('a start made after the erasure answered keeps its entry, under the number and under its owner; the erased owner and the number link each other no more', async () => {
      stores = make(() => suite.sb.now());
      const boot = async (store: VerificationStore) => {
        const host = await createTestApp({
          platform: 'express',
          module: moduleOptions(suite.sb, { history: {}, store }),
        });
        hosts.push(host);
        return host;
      };
      const [first, second] = [await boot(stores.writer), await boot(stores.eraser)];
      const history = second.app.get(VerificationHistory);
      const phone = `+7916750${String(process.pid % 100).padStart(2, '0')}${label === 'one Redis' ? '02' : '01'}`;
      const start = (host: TestApp, user: string) =>
        call(
          host.url,
          'POST',
          '/verification/start',
          { phone_number: phone, method: 'sms' },
          { 'x-user': user },
        );

      // The first instance's history write of a start is held after it read the number's erasure mark.
      const reached = stores.writer.gate.arm();
      const slow = start(first, 'ann');
      const early = slow.then((answer) => {
        throw new Error(`the start answered ${answer.status} before its history write was held`);
      });
      await Promise.race([reached, early]);
      early.catch(() => undefined);
      await second.app.get(VerificationErasure).forget({ phoneNumber: phone });

      // After the erasure answered: a new start of the number, by someone else, on the second instance.
      await suite.sb.advance(60_000);
      expect((await start(second, 'bob')).status).toBe(201);
      const listed = async () =>
        (await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.owner, e.requestId]);
      const bobs = [['start', 'bob', expect.any(String)]];
      expect(await listed()).toEqual(bobs);

      // The held write lands: the erasure it raced is redone.
      stores.writer.gate.release();
      await slow;

      expect(await history.list({ owner: 'ann' })).toEqual([]);
      expect(await listed()).toEqual(bobs);
      expect((await history.list({ owner: 'bob' })).map((e) => [e.kind, e.phoneNumber])).toEqual([
        ['start', phone],
      ]);
      // A store dump: the number's ring and ann's (whose entries of it were erased) link each other no more.
      const keys = second.app.get<ResolvedVerificationOptions>(RESOLVED_VERIFICATION_OPTIONS, {
        strict: false,
      }).dataKeys as DataKeys;
      const tag = (ring: string) => ring.replace(/^history:\{(.*)\}$/, '$1');
      const [number, ann, bob] = [numberRing(keys, phone), ownerRing(keys, 'ann'), ownerRing(keys, 'bob')];
      const dump = await stores.dump();
      // bob's start, written after the erasure, keeps its links: the number's ring and bob's link each other.
      for (const [from, to] of [
        [number, bob],
        [bob, number],
      ])
        expect(dump.filter((line) => line.includes(`${from}:links:`) && line.endsWith(to))).toHaveLength(1);
      expect(
        dump.filter(
          (line) =>
            line.includes(':link') &&
            ((line.includes(tag(number)) && line.includes(tag(ann))) ||
              (line.includes(tag(ann)) && line.includes('history:{n:'))),
        ),
      ).toEqual([]);
    });
  },
);
