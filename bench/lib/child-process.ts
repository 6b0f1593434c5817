import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { getHeapSnapshot } from 'node:v8';
import { settledHeapUsed } from '../../test/hardening/support/heap.js';
import { availableParallelism } from 'node:os';

/** Messages between the runner and a server it forked (node IPC, JSON). */
type Request = { id: number; cmd: string; arg?: unknown };
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };
type Ready = { type: 'ready'; value: unknown };

export interface ForkOptions {
  /** Pin every thread of the child to this CPU (`taskset`), e.g. "one core" for webhook ingest. */
  cpu?: number;
  /** Extra node flags; `--expose-gc` is always given. */
  execArgv?: string[];
}

/**
 * A benchmark server in its own process (the sandbox, a host app, the minimal proxy), so that the
 * load generator, the proxy and the upstream do not share one event loop, and so that heap figures
 * belong to one program only. Commands go over the IPC channel.
 */
export class ChildServer<R = unknown> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private exited = false;

  private constructor(
    private readonly child: ChildProcess,
    readonly ready: R,
    readonly pinnedCpu: number | undefined,
  ) {
    child.on('message', (message: Reply) => {
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.ok) waiter.resolve(message.value);
      else waiter.reject(new Error(message.error));
    });
    child.once('exit', (code, signal) => {
      this.exited = true;
      for (const waiter of this.pending.values())
        waiter.reject(new Error(`server process exited (${code ?? signal}) during a call`));
      this.pending.clear();
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Forks `script` (a compiled file under dist-bench) with one JSON argument and waits for it to be ready. */
  static async fork<R>(script: URL, arg: unknown, options: ForkOptions = {}): Promise<ChildServer<R>> {
    const child = fork(script, [JSON.stringify(arg ?? null)], {
      execArgv: ['--expose-gc', ...(options.execArgv ?? [])],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const ready = await new Promise<R>((resolve, reject) => {
      const onExit = (code: number | null): void =>
        reject(new Error(`${script.pathname} exited with ${code} before it was ready`));
      child.once('exit', onExit);
      child.once('error', reject);
      child.on('message', function onReady(message: Ready) {
        if (message?.type !== 'ready') return;
        child.off('message', onReady);
        child.off('exit', onExit);
        resolve(message.value as R);
      });
    });
    const pinned =
      options.cpu !== undefined && pinProcess(child.pid!, String(options.cpu)) ? options.cpu : undefined;
    return new ChildServer<R>(child, ready, pinned);
  }

  call<T = unknown>(cmd: string, arg?: unknown): Promise<T> {
    if (this.exited) return Promise.reject(new Error(`server process has exited (call ${cmd})`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, cmd, arg } satisfies Request);
    });
  }

  /** Asks the server to close and waits for its exit (killed after 10 s). */
  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.call('close').catch(() => undefined);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** `taskset -a -p -c <cpus> <pid>`; false when taskset is missing or refuses (the run then says "not pinned"). */
export function pinProcess(pid: number, cpus: string): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** CPU seconds (user + system, every thread) a process has used so far, from /proc (Linux); NaN elsewhere. */
export function processCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Every CPU of the machine, in taskset's list syntax. */
export function allCpus(): string {
  return `0-${availableParallelism() - 1}`;
}

let profiler: Session | undefined;

/** Commands every server answers. */
const BUILT_IN: Record<string, (arg: unknown) => unknown> = {
  /** Starts the V8 CPU profiler (steady state only, unlike --cpu-prof which includes the boot). */
  profileStart: async () => {
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  },
  /**
   * Full collections now, so that the next measurement does not pay for garbage the last one left
   * (a saturated run leaves more in a process that allocates more, due at some moment after it).
   */
  collectGarbage: () => void settledHeapUsed(),
  /** Objects on the heap by constructor (or string kind): count and self size, after full collections. */
  heapCensus: async () => {
    settledHeapUsed();
    const chunks: Buffer[] = [];
    for await (const chunk of getHeapSnapshot()) chunks.push(chunk as Buffer);
    const snapshot = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
      nodes: number[];
      strings: string[];
    };
    const fields = snapshot.snapshot.meta.node_fields;
    const types = snapshot.snapshot.meta.node_types[0];
    const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
      number,
      number,
      number,
    ];
    const census: Record<string, [number, number]> = {};
    for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
      const type = types[snapshot.nodes[i + typeAt]!]!;
      const key =
        type === 'object' || type === 'closure'
          ? `${type}:${snapshot.strings[snapshot.nodes[i + nameAt]!]}`
          : type;
      const entry = (census[key] ??= [0, 0]);
      entry[0]++;
      entry[1] += snapshot.nodes[i + sizeAt]!;
    }
    return census;
  },
  /** Starts V8's sampling heap profiler: where the allocations come from. */
  allocationsStart: async () => {
    profiler = new Session();
    profiler.connect();
    await profiler.post('HeapProfiler.enable');
    await profiler.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  },
  /** Stops it and writes a .heapprofile (Chrome DevTools) to the given path. */
  allocationsStop: async (path) => {
    if (!profiler) throw new Error('profiler not started');
    const { profile } = await profiler.post('HeapProfiler.stopSampling');
    profiler.disconnect();
    profiler = undefined;
    writeFileSync(path as string, JSON.stringify(profile));
    return path;
  },
  /** Stops it and writes a .cpuprofile (open in Chrome DevTools) to the given path. */
  profileStop: async (path) => {
    if (!profiler) throw new Error('profiler not started');
    const { profile } = await profiler.post('Profiler.stop');
    profiler.disconnect();
    profiler = undefined;
    writeFileSync(path as string, JSON.stringify(profile));
    return path;
  },
  /** CPU time this process used so far, user + system, in microseconds. */
  cpuMicros: () => {
    const usage = process.cpuUsage();
    return usage.user + usage.system;
  },
};

/**
 * The child side: announces `ready`, then answers the runner's commands. `close` runs `onClose`
 * and exits; losing the runner (IPC disconnect) exits too, so no server outlives a crashed run.
 */
export function serveCommands(
  ready: unknown,
  handlers: Record<string, (arg: unknown) => unknown>,
  onClose: () => Promise<void> | void = () => undefined,
): void {
  const send = (message: Reply | Ready): void => {
    process.send?.(message);
  };
  process.on('message', (message: Request) => {
    if (message.cmd === 'close') {
      void Promise.resolve()
        .then(onClose)
        .finally(() => process.exit(0));
      return;
    }
    const handler = handlers[message.cmd] ?? BUILT_IN[message.cmd];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown command ${message.cmd}`);
        return handler(message.arg);
      })
      .then(
        (value) => send({ id: message.id, ok: true, value: value ?? null }),
        (error: unknown) =>
          send({ id: message.id, ok: false, error: error instanceof Error ? error.message : String(error) }),
      );
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', value: ready });
}

/** The argument a server was forked with. */
export function forkArgument<T>(): T {
  return JSON.parse(process.argv[2] ?? 'null') as T;
}

export { settledHeapUsed };
