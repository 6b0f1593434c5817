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
  },
  () => host.close(),
);
