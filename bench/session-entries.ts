/**
 * Every store entry one pending SMS session writes in MemoryStore (issue 45's memory goal): key, value
 * size, TTL, protection off and on, as the memory benchmark starts them (one client per session, after
 * a warm-up whose shared entries are not counted). Run after `npm run bench -- memory` compiled it:
 * `node --expose-gc dist-bench/bench/session-entries.js`.
 */
import { MethodStats } from '../src/account/method-stats.service.js';
import { VerificationService } from '../src/verification/verification.service.js';
import { MemoryStore } from '../src/store/memory.store.js';
import { keyOfStored } from '../src/store/stored-keys.js';
import { forkSandbox, PhoneNumbers } from './lib/context.js';
import { startHostApp } from './lib/host-app.js';

interface Entry {
  key: string;
  value: string;
  ttlMs: number;
}

function entries(store: MemoryStore): Map<string, Entry> {
  const inner = store as unknown as {
    entries: Map<string, number>;
    evictableEntries: Map<string, number>;
    slab: { value(slot: number): string; expiresAt(slot: number): number };
    queues: Map<string, { current: Map<string, number> }>;
  };
  const now = store.now();
  const all = new Map<string, Entry>();
  for (const map of [inner.entries, inner.evictableEntries])
    for (const [stored, slot] of map) {
      const key = keyOfStored(stored);
      all.set(key, { key, value: inner.slab.value(slot), ttlMs: inner.slab.expiresAt(slot) - now });
    }
  for (const [queue, due] of inner.queues)
    for (const member of due.current.keys())
      all.set(`queue ${queue} ${member}`, { key: `queue ${queue} ${member}`, value: '', ttlMs: NaN });
  return all;
}

async function listFor(protection: boolean, sandbox: Awaited<ReturnType<typeof forkSandbox>>): Promise<void> {
  const s = sandbox.ready;
  const host = await startHostApp({
    platform: 'fastify',
    module: {
      api: { baseUrl: s.url, apiKey: s.apiKey, apiSecret: s.apiSecret },
      webhooks: { secret: s.webhookSecret },
      reconcile: { lazyIntervalMs: 3_600_000 },
      expirySeconds: 600,
      limits: protection
        ? { spendCap: { amount: 100_000_000, windowMs: 86_400_000 }, pumping: { mode: 'monitor' } }
        : { enabled: false },
    },
  });
  try {
    const store = host.store as MemoryStore;
    const service = host.app.get(VerificationService);
    const figures = host.app.get(MethodStats);
    const phones = new PhoneNumbers();
    let n = 0;
    const startOne = async (): Promise<void> => {
      const i = n++;
      const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      await service.start({
        phoneNumber: phones.take(),
        method: 'sms',
        owner: undefined,
        ip,
        request: { ip },
      });
    };
    for (let i = 0; i < 300; i++) await startOne();
    await figures.flush();
    const before = entries(store);
    await startOne();
    await figures.flush();
    const after = entries(store);
    let bytes = 0;
    console.log(`\n## protection ${protection ? 'on' : 'off'}: entries one more session wrote or changed`);
    for (const entry of after.values()) {
      const was = before.get(entry.key);
      if (was && was.value === entry.value) continue;
      bytes += entry.key.length + entry.value.length;
      const ttl = `${Math.round(entry.ttlMs / 1000)} s`;
      const mark = was ? 'changed' : 'new';
      console.log(
        `${mark}\t${entry.key.length}+${entry.value.length} B\tttl ${ttl}\t${entry.key}\t${entry.value}`,
      );
    }
    console.log(`key+value characters: ${bytes}; entries now ${after.size}, before ${before.size}`);
  } finally {
    await host.close();
  }
}

const sandbox = await forkSandbox({ demoAccount: { balance: 1_000_000_000 } });
try {
  await listFor(false, sandbox);
  await listFor(true, sandbox);
} finally {
  await sandbox.close();
}
