/**
 * Attack (U4): a link written while the other side is being erased, on two instances sharing one store. The
 * first instance's history write of a start has landed in both rings and claimed the number ring's link to
 * the owner (its pair PENDING), its slot not yet taken (held); the second instance erases the owner meanwhile:
 * the erasure's unlink finds the pair PENDING and the slot not written. Once released, the link to the erased
 * owner's ring is written after the erasure answered.
 *
 * Result (the attack did not succeed): the entry finds the owner's erasure mark changed once written and
 * erases the owner again, which unlinks the number's ring from it: no key or value of the history names the
 * owner's ring, the number's entry stays without the owner. One MemoryStore and one Redis.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { DataKeys } from '../../src/core/data-keys.js';
import { ownerRing } from '../../src/history/history-rings.js';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../../src/options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';
import { gatedPairs, type GatedPair } from '../support/gated-stores.js';

// The writer's first count of the number ring's links is held until released.
describe.each(gatedPairs('history-link-race', /history:\{n:[^}]+\}:links$/))(
  'history: a link written while its owner is erased (two instances, %s)',
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

    it("the number's link to the owner, held while the owner is erased, is gone once it lands: nothing names the owner's ring", async () => {
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
      const phone = `+7916760${String(process.pid % 100).padStart(2, '0')}${label === 'one Redis' ? '02' : '01'}`;
      const owner = `cleo-${randomUUID()}`;

      const reached = stores.writer.gate.arm();
      const slow = call(
        first.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'sms' },
        { 'x-user': owner },
      );
      const early = slow.then((answer) => {
        throw new Error(`the start answered ${answer.status} before its link was held`);
      });
      await Promise.race([reached, early]);
      early.catch(() => undefined);
      await second.app.get(VerificationErasure).forget({ owner });

      stores.writer.gate.release();
      expect((await slow).status).toBe(201);

      expect(await history.list({ owner })).toEqual([]);
      expect((await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.owner])).toEqual([
        ['start', undefined],
      ]);
      const keys = second.app.get<ResolvedVerificationOptions>(RESOLVED_VERIFICATION_OPTIONS, {
        strict: false,
      }).dataKeys as DataKeys;
      const tag = ownerRing(keys, owner).replace(/^history:\{(.*)\}$/, '$1');
      expect((await stores.dump()).filter((line) => line.includes('history:') && line.includes(tag))).toEqual(
        [],
      );
    });
  },
);
