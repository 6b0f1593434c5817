/**
 * A start the pumping defence's reading lets through is counted there and reserved for by the spend
 * cap at once (one store round trip). When the spend cap refuses it, the defence's counts of it are
 * given back: they end as if only the starts that went ahead had been counted, as when the
 * reservation was made only after the count had passed. Judged on the counters of a store dump.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { LimitsOptions, VerificationModuleOptions } from '../../src/options/verification.options.js';
import { ONE_PLATFORM, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import { dumpMemoryStore, dumpRedisPrefix } from '../support/store-dump.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { freshIp, freshPhone, protectedHost, refusal, startFrom } from './protection-host.js';

type StoreKind = 'memory' | 'redis';

const SHAPES: [Platform, StoreKind][] = [
  ...PLATFORMS.map((p): [Platform, StoreKind] => [p, 'memory']),
  ...ONE_PLATFORM.map((p): [Platform, StoreKind] => [p, 'redis']),
];

describe.each(SHAPES)(
  'the pumping count and the spend reservation taken together (%s, %s store)',
  (platform, kind) => {
    // A frozen clock: both runs count in the same windows.
    const suite = sandboxSuite({ demoAccount: { balance: 100_000 } });
    const fx = {
      get sb(): VerificationSandbox {
        return suite.sb;
      },
      hosts: [] as TestApp[],
    };
    afterEach(async () => {
      await Promise.all(fx.hosts.splice(0).map((h) => h.close()));
    });

    /** A host on a store of its own, and the protection counters (integer values under `protect:`) it holds. */
    async function host(limits: LimitsOptions): Promise<{ app: TestApp; counters: () => Promise<string[]> }> {
      let counters: () => Promise<string[]>;
      let store: VerificationModuleOptions['store'];
      if (kind === 'memory') {
        const memory = new MemoryStore({ clock: () => fx.sb.now() });
        store = memory;
        counters = async () => dumpMemoryStore(memory);
      } else {
        const keyPrefix = `shares:${randomBytes(4).toString('hex')}:`;
        store = { url: sharedRedisUrl(), keyPrefix };
        counters = async () =>
          (await dumpRedisPrefix(sharedRedisUrl(), keyPrefix)).map((line) =>
            line.slice(keyPrefix.length).replace(/ \d+:/, ' '),
          );
      }
      const app = await protectedHost(fx.sb, platform, limits, { store });
      fx.hosts.push(app);
      return {
        app,
        counters: async () => (await counters()).filter((line) => /^protect:\S+ -?\d+$/.test(line)).sort(),
      };
    }

    it("a start the spend cap refuses leaves nothing in the defence's counts", async () => {
      // The cap holds one SMS (the sandbox's price, 3 RUB) a day; the defence in monitor mode counts
      // every start and keeps no share of the cap back.
      const limits: LimitsOptions = {
        spendCap: { amount: 3, windowMs: 86_400_000 },
        pumping: { mode: 'monitor' },
      };
      const h = await host(limits);
      const pumping = async (): Promise<string[]> =>
        (await h.counters()).filter(
          (line) => /^protect:pump:(?!c:|cm:|nm:|sh:)/.test(line) && !line.endsWith(' 0'),
        );
      expect((await startFrom(h.app, freshIp(), freshPhone())).status).toBe(201);
      const counted = await pumping();
      expect(counted.length).toBeGreaterThan(0);
      const refused = await startFrom(h.app, freshIp(), freshPhone());
      expect({ status: refused.status, reason: refusal(refused).reason }).toEqual({
        status: 503,
        reason: 'spend_cap',
      });
      // The refused start's counts (range, prefix, country, caller, number; day and week) were taken and
      // given back. Its burst marks and counts and its caller's week share stay, as for any start given back.
      expect(await pumping()).toEqual(counted);
    });
  },
);
