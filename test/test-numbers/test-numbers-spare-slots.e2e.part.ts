/**
 * Spare test sessions in their network's slots: past the test sessions of a number a client network keeps an
 * hour (KEPT_TEST_SESSIONS_PER_NETWORK_HOUR, 5; the number's own past 10 across networks), each further one is stored in one of the network's SPARE_TEST_SESSION_SLOTS (5), in the
 * place of the oldest, whose handle then reads as unknown. So on every store (Memory, Redis, Redis
 * Cluster) a flood of free test starts from one network keeps its 5 sessions and 5 spare ones, not one
 * per start; a spare session works as a kept one while it holds its slot, with its own attempts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import { SPARE_TEST_SESSION_SLOTS } from '../../src/core/test-session.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import { KEPT_TEST_SESSIONS_PER_NETWORK_HOUR as KEPT } from '../../src/test-numbers/test-number-sessions.js';
import type { MemoryStore } from '../../src/store/memory.store.js';
import { uniqueKeyPrefix } from '../multi-instance/deployment.js';
import { ThrowawayRedisCluster } from '../support/redis-cluster.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { dumpMemoryStore } from '../support/store-dump.js';
import { call, createTestApp, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

describe('test numbers: spare slots', () => {
  const CODE = '123456';
  const CASES = [
    ['express', 'memory'],
    ['fastify', 'memory'],
    ['express', 'redis'],
    ['fastify', 'cluster'],
  ] as const;

  let cluster: ThrowawayRedisCluster | undefined;
  beforeAll(async () => {
    cluster = await ThrowawayRedisCluster.start();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  describe.each(CASES)('spare test sessions in slots (%s, %s store)', (platform: Platform, kind) => {
    const suite = sandboxSuite();
    const reviewer = `+79990009${platform === 'express' ? 3 : 4}${kind.length}${kind === 'memory' ? 1 : 2}`;
    let serial = 0;
    let keyPrefix = '';
    let client: Redis | Cluster | undefined;
    afterAll(async () => {
      await client?.quit();
    });

    async function boot(): Promise<() => Promise<number>> {
      const account = await suite.sb.createAccount({ balance: 100 });
      keyPrefix = uniqueKeyPrefix(`spare-slots-${platform}-${++serial}`);
      await client?.quit();
      client =
        kind === 'redis'
          ? new Redis(sharedRedisUrl())
          : kind === 'cluster'
            ? new Cluster(cluster!.seeds)
            : undefined;
      suite.host = await createTestApp({
        platform,
        trustProxy: true,
        module: moduleOptions(
          suite.sb,
          {
            limits: {},
            owner: undefined,
            ...(client === undefined ? {} : { store: { redis: client, keyPrefix } }),
            testNumbers: { numbers: [{ phoneNumber: reviewer, code: CODE }], maxAttempts: 5 },
          },
          account,
        ),
      });
      const store = suite.host.app.get<VerificationStore>(VerificationStore);
      // Live keys, the per-client counters (`protect:…`, two per address: the documented residual) apart.
      return async () => {
        const keys =
          client === undefined
            ? dumpMemoryStore(store as MemoryStore).map((line) => line.split(' ')[0]!)
            : client instanceof Cluster
              ? (await Promise.all(client.nodes('master').map((node) => node.keys(`${keyPrefix}*`)))).flat()
              : await client.keys(`${keyPrefix}*`);
        // Values only (a due-queue is a shared key of its own type).
        const values =
          client === undefined
            ? keys
            : (
                await Promise.all(keys.map(async (k) => ((await client!.type(k)) === 'string' ? [k] : [])))
              ).flat();
        const own = values.map((k) => (client === undefined ? k : k.slice(keyPrefix.length)));
        const live = await Promise.all(
          own
            .filter((k) => !k.startsWith('protect:'))
            .map(async (k) => ((await store.get(k)) === null ? 0 : 1)),
        );
        return live.reduce<number>((a, b) => a + b, 0);
      };
    }
    const post = (path: string, body: unknown, ip: string) =>
      call(suite.host!.url, 'POST', `/verification/${path}`, body, { 'x-forwarded-for': ip });
    const start = (ip: string) => post('start', { phone_number: reviewer, method: 'sms' }, ip);
    const ipOf = (net: number, i: number) => `2001:db8:${net.toString(16)}:${i.toString(16)}::1`;
    const check = (answer: Awaited<ReturnType<typeof start>>, code: string, ip: string) =>
      post('check', { verification_id: answer.body.verification_id, code }, ip);

    it('a network keeps its 5 sessions and 5 spare ones, whatever its test starts; another network its own', async () => {
      const kept = await boot();
      const net = 0x700 + serial;
      for (let i = 0; i < KEPT; i++) expect((await start(ipOf(net, i))).status).toBe(201);
      const allKept = await kept();
      // Each spare session: its record and its played session (not indexed under the number).
      for (let i = KEPT; i < KEPT + SPARE_TEST_SESSION_SLOTS; i++)
        expect((await start(ipOf(net, i))).status).toBe(201);
      expect(await kept()).toBe(allKept + 2 * SPARE_TEST_SESSION_SLOTS);
      for (let i = KEPT + SPARE_TEST_SESSION_SLOTS; i < KEPT + 35; i++)
        expect((await start(ipOf(net, i))).status).toBe(201);
      expect(await kept()).toBe(allKept + 2 * SPARE_TEST_SESSION_SLOTS);
      // Another network's first one is kept: its session, record and index slot (and the network's counter).
      expect((await start(ipOf(net + 1, 0))).status).toBe(201);
      expect(await kept()).toBe(allKept + 2 * SPARE_TEST_SESSION_SLOTS + 4);
    }, 120_000);

    it("a spare session works while it holds its slot (4 more spare starts), and gives way at the 5th; the slot's next session has its own attempts", async () => {
      await boot();
      const net = 0x800 + serial;
      for (let i = 0; i < KEPT; i++) expect((await start(ipOf(net, i))).status).toBe(201);
      const first = await start(ipOf(net, KEPT));
      expect((await check(first, '000000', ipOf(net, KEPT))).body).toMatchObject({ attempts_remaining: 4 });
      const later: Awaited<ReturnType<typeof start>>[] = [];
      for (let i = 1; i < SPARE_TEST_SESSION_SLOTS; i++) later.push(await start(ipOf(net, KEPT + i)));
      expect((await check(first, '000000', ipOf(net, KEPT))).body).toMatchObject({ attempts_remaining: 3 });

      const next = await start(ipOf(net, 20));
      expect(next.status).toBe(201);
      const gone = await check(first, CODE, ipOf(net, KEPT));
      expect(gone.status).toBe(404);
      // The slot's new session: its first wrong code leaves 4 attempts, then the right code verifies it.
      expect((await check(next, '000000', ipOf(net, 20))).body).toMatchObject({ attempts_remaining: 4 });
      expect((await check(next, CODE, ipOf(net, 20))).body).toMatchObject({ verified: true });
      // The others still hold theirs.
      expect((await check(later[0]!, CODE, ipOf(net, KEPT + 1))).body).toMatchObject({ verified: true });
    }, 120_000);
  });
});
