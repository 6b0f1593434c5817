/** Runs one exported benchmark function in this fresh process (see runIsolated in lib/context.ts). */
import { forkArgument, serveCommands } from '../lib/child-process.js';

const { modulePath, exportName } = forkArgument<{ modulePath: string; exportName: string }>();
const loaded = (await import(new URL(modulePath, new URL('../', import.meta.url)).href)) as Record<
  string,
  (arg: unknown) => unknown
>;
const run = loaded[exportName];
if (typeof run !== 'function') throw new Error(`${modulePath} has no export ${exportName}`);
serveCommands({}, { run: (arg) => run(arg) });
