import { beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { clientAddressKey } from '../../src/core/client-address.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { methodTraits, type KnownVerificationMethod } from '../../src/core/verification-method.js';
import { VerificationSandbox, type SandboxFaultInput } from '../../src/testing/index.js';
import { call, createTestApp, ONE_PLATFORM } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/**
 * The attacks of the abuse review (issue 16, points 5, 6 and 9) as properties: whatever address,
 * flood or price-list behaviour fast-check comes up with, the defence holds.
 */

const group = fc.integer({ min: 0, max: 0xffff });
const groups = (n: number) => fc.array(group, { minLength: n, maxLength: n });

/** An IPv6 address written the ways a proxy or socket may write it. */
function spell(parts: number[], style: { compress: boolean; upper: boolean; zone: string | null }): string {
  let text = parts.map((p) => p.toString(16)).join(':');
  if (style.compress) {
    // Compress the first run of two or more zero groups, as RFC 5952 allows.
    text = text.replace(/(^|:)0(:0)+(:|$)/, '::');
  }
  if (style.upper) text = text.toUpperCase();
  return style.zone === null ? text : `${text}%${style.zone}`;
}
const styleOf = fc.record({
  compress: fc.boolean(),
  upper: fc.boolean(),
  zone: fc.option(fc.constantFrom('eth0', '1', 'en0'), { nil: null }),
});

describe('hardening: client keys of IPv6 addresses', () => {
  it('any two addresses of one /64, however written, share one key', () => {
    fc.assert(
      fc.property(groups(4), groups(4), groups(4), styleOf, styleOf, (prefix, a, b, styleA, styleB) => {
        fc.pre(!(prefix[0] === 0 && prefix[1] === 0 && prefix[2] === 0 && prefix[3] === 0)); // not ::/64 (IPv4-mapped lives there)
        const keyA = clientAddressKey(spell([...prefix, ...a], styleA));
        const keyB = clientAddressKey(spell([...prefix, ...b], styleB));
        expect(keyA).toBe(keyB);
      }),
      { numRuns: 2000 },
    );
  });

  it('addresses of different /64s never share a key', () => {
    fc.assert(
      fc.property(groups(4), groups(4), groups(4), styleOf, (p, q, tail, style) => {
        fc.pre(p.some((g, i) => g !== q[i]));
        fc.pre(p.some((g) => g !== 0) && q.some((g) => g !== 0));
        expect(clientAddressKey(spell([...p, ...tail], style))).not.toBe(
          clientAddressKey(spell([...q, ...tail], style)),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('an IPv4-mapped IPv6 address is its IPv4 address', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.boolean(), (ipv4, upper) => {
        const mapped = `${upper ? '::FFFF' : '::ffff'}:${ipv4}`;
        expect(clientAddressKey(mapped)).toBe(clientAddressKey(ipv4));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('hardening: flooding a bounded MemoryStore', () => {
  const MAX = 8;
  const op = fc.oneof(
    fc.record({ kind: fc.constant('kept' as const), key: fc.integer({ min: 0, max: 20 }), value: fc.nat() }),
    fc.record({
      kind: fc.constant('client' as const),
      key: fc.integer({ min: 0, max: 5000 }),
      value: fc.nat(),
    }),
  );

  it('no flood of client counters evicts a protection or session entry', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 400 }), async (ops) => {
        const store = new MemoryStore({ maxEntries: MAX, maxEvictableEntries: MAX });
        // Model: the kept entries a store bounded to MAX must hold, by last write (client writes ignored).
        const kept = new Map<string, string>();
        try {
          for (const o of ops) {
            if (o.kind === 'client') {
              await store.increment(`protect:start-client:${o.key}`, 1, 3_600_000, { evictable: true });
              continue;
            }
            const key = `protect:cooldown:${o.key}`;
            await store.set(key, String(o.value), 3_600_000);
            kept.delete(key);
            kept.set(key, String(o.value));
            if (kept.size > MAX) kept.delete(kept.keys().next().value!);
          }
          for (const [key, value] of kept) await expect(store.get(key)).resolves.toBe(value);
        } finally {
          await store.close();
        }
      }),
      { numRuns: 300 },
    );
  });
});

type PriceListBehaviour = { label: string; faults: SandboxFaultInput[] };
const PRICE_LIST: PriceListBehaviour[] = [
  { label: 'answers', faults: [] },
  { label: 'is down (500)', faults: [{ route: 'GET /v1/prices', kind: 'status', status: 500, count: 0 }] },
  { label: 'answers garbage', faults: [{ route: 'GET /v1/prices', kind: 'garbage', count: 0 }] },
  { label: 'answers empty', faults: [{ route: 'GET /v1/prices', kind: 'empty', count: 0 }] },
  { label: 'resets', faults: [{ route: 'GET /v1/prices', kind: 'reset', count: 0 }] },
  { label: 'fails once', faults: [{ route: 'GET /v1/prices', kind: 'status', status: 503, count: 1 }] },
  { label: 'is slow', faults: [{ route: 'GET /v1/prices', kind: 'latency', latency_ms: 150, count: 0 }] },
];
const METHODS = ['sms', 'flash_call', 'reverse_flash_call', 'msgr1_otp', 'msgr2_bot', 'operator_id'] as const;

describe.each(ONE_PLATFORM)('hardening: the spend cap under concurrent starts (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false, demoAccount: { balance: 1_000_000 } });
  let sb: VerificationSandbox;
  let serial = 0;

  beforeAll(async () => {
    sb = suite.sb;
  });

  it('concurrent starts never commit more than the cap, whatever the price list does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PRICE_LIST),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.constantFrom(...METHODS), { minLength: 1, maxLength: 40 }),
        async (priceList, capRub, methods) => {
          sb.clearFaults();
          for (const fault of priceList.faults) sb.addFault(fault);
          const host = await createTestApp({
            platform,
            trustProxy: true,
            module: {
              api: {
                baseUrl: sb.url,
                apiKey: sb.demoAccount.apiKey,
                apiSecret: sb.demoAccount.apiSecret,
                maxRetries: 0,
              },
              clock: () => sb.now(),
              reconcile: { enabled: false },
              methods: [...METHODS],
              limits: {
                startPerIp: false,
                startPerPhone: false,
                resendCooldownMs: false,
                spendCap: { amount: capRub, windowMs: 86_400_000 },
              },
            },
          });
          try {
            const phones = methods.map(() => `+7916${String(++serial).padStart(7, '0')}`);
            await Promise.all(
              methods.map((method, i) =>
                call(host.url, 'POST', '/verification/start', { phone_number: phones[i], method }),
              ),
            );
            const sessions = phones.flatMap((phone) => sb.sessionsFor(phone));
            // Not a vacuous pass: the first start always fits a cap whose share open to any method
            // (all but the last 20 %, kept for methods charged on proof) holds the worst-case price.
            if (capRub * 0.8 >= 3) expect(sessions.length).toBeGreaterThan(0);
            // What the host can be made to pay with no number owner's proof: a method charged on
            // proof reserves nothing and is counted once proved (issue 29; nobody proves one here,
            // see spend-cap.spec for a proof), so its sessions count only when the API charged them.
            const committed = sessions.filter(
              (s) => !methodTraits(s.method as KnownVerificationMethod).chargedOnProof || s.charged,
            );
            const spentKopecks = committed.reduce(
              (sum, s) => sum + Math.round(Number((s.cost as { amount: number }).amount) * 100),
              0,
            );
            expect(spentKopecks).toBeLessThanOrEqual(capRub * 100);
          } finally {
            await host.close();
            sb.clearFaults();
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 120_000);
});
