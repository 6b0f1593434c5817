/**
 * A NestJS host app with the module, in its own process (forked with a HostConfig). Answers the
 * runner's questions about what it emitted, its heap and its store.
 */
import { MemoryStore } from '../../src/store/memory.store.js';
import { forkArgument, serveCommands, settledHeapUsed } from '../lib/child-process.js';
import { startHostApp, type HostConfig } from '../lib/host-app.js';

export interface HostReady {
  url: string;
}

const host = await startHostApp(forkArgument<HostConfig>());

serveCommands(
  { url: host.url } satisfies HostReady,
  {
    tally: (withSessions) => host.tally(withSessions === true),
    resetTally: () => host.resetTally(),
    advanceClock: (ms) => host.advanceClock(ms as number),
    heapUsed: () => settledHeapUsed(),
    storeEntries: () => (host.store instanceof MemoryStore ? host.store.entryCount : null),
    queueSize: (queue) => host.store.queueSize(queue as string),
    /** The `cost.amount` of each session record (what the API reported), null without a record. */
    recordedCosts: async (ids) => {
      const costs: Record<string, number | null> = {};
      for (const id of ids as string[]) {
        const raw = await host.store.get(`session:{${id}}`);
        costs[id] =
          raw === null ? null : ((JSON.parse(raw) as { cost?: { amount: number } }).cost?.amount ?? null);
      }
      return costs;
    },
  },
  () => host.close(),
);
