import { afterAll, beforeAll } from '@jest/globals';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { VerificationSandbox } from '../../src/testing/index.js';

export const root = resolve(process.cwd());

/** What a host app puts in its `dependencies` beside this package: name → version or range. */
export type HostPeers = Record<string, string>;

/**
 * The newest versions the required peers' ranges allow, and what a NestJS 12 app has anyway (an HTTP platform,
 * `reflect-metadata` and `rxjs`, which are Nest's peers, not ours). npm picks the newest in each range.
 */
export const LATEST_PEERS: HostPeers = {
  '@nestjs/common': '^12.0.0',
  '@nestjs/core': '^12.0.0',
  '@nestjs/platform-express': '^12.0.0',
  '@nestjs/event-emitter': '^12.0.0',
  'class-validator': '>=0.13.2',
  'class-transformer': '>=0.5.1',
  'reflect-metadata': '^0.2.0',
  rxjs: '^7.1.0',
};

/**
 * The lowest versions the ranges allow (ours, and Nest's for `reflect-metadata` and `rxjs`). `@nestjs/core` and
 * `@nestjs/platform-express` 12.0.0 were published with peers on `@nestjs/common` ^11 and install beside no
 * NestJS 12 at all, so a NestJS 12 app starts at their 12.0.1. `class-transformer` starts at 0.5.1 although Nest
 * declares `>=0.4.1`: its ValidationPipe calls `plainToInstance` (0.5.0 on) and `classToPlain` (gone in 0.5.0,
 * back in 0.5.1), so a validated body fails with a 500 on anything older.
 */
export const LOWEST_PEERS: HostPeers = {
  '@nestjs/common': '12.0.0',
  '@nestjs/core': '12.0.1',
  '@nestjs/platform-express': '12.0.1',
  '@nestjs/event-emitter': '12.0.0',
  'class-validator': '0.13.2',
  'class-transformer': '0.5.1',
  'reflect-metadata': '0.1.12',
  rxjs: '7.1.0',
};

/** The floors of the package's own caret dependencies, for the lowest install (as `overrides`). */
export const LOWEST_DEPENDENCIES: HostPeers = {
  'ipaddr.js': '2.5.0',
  'libphonenumber-js': '1.13.16',
  undici: '7.30.2',
};

/** A fresh app folder with the packed package installed from its tarball, as users get it. */
export interface PackedApp {
  dir: string;
  /** Where the package was installed: `<dir>/node_modules/nestjs-phone-verification`. */
  packageDir: string;
  /** What `npm install` printed (warnings included). */
  installLog: string;
  remove(): void;
}

/** The environment of a nested npm or host process: none of the outer `npm test`'s settings leak in. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!/^npm_/i.test(key) && key !== 'NODE_OPTIONS' && key !== 'INIT_CWD') env[key] = value;
  return env;
}

/**
 * Packs the package (`npm pack`, so `files` and `exports` are what users get; `--ignore-scripts`: `npm test`
 * has built `dist`, and a second build would race the other suite's pack) and installs the tarball into a
 * fresh CommonJS app (no `"type"`) with `peers` from the npm registry and nothing else: no link to this
 * repository's `node_modules`, so a missing or too narrow peer shows here as it would for users. Peer
 * conflicts fail the install (`ERESOLVE`, no `--legacy-peer-deps`). npm's cache is used offline first, so a
 * run after the first reads the registry for nothing it already has.
 */
export function installPackedPackage(peers: HostPeers, overrides: HostPeers = {}): PackedApp {
  if (!existsSync(join(root, 'dist', 'index.js')))
    execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' });
  const dir = mkdtempSync(join(tmpdir(), 'pv-host-'));
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
      cwd: root,
      encoding: 'utf8',
      env: cleanEnv(),
    }),
  ) as { filename: string }[];
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: 'packed-host',
      private: true,
      dependencies: { 'nestjs-phone-verification': `file:./${packed[0].filename}`, ...peers },
      overrides,
    }),
  );
  let installLog: string;
  try {
    installLog = execFileSync(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--legacy-peer-deps=false',
        '--loglevel=warn',
      ],
      { cwd: dir, encoding: 'utf8', env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`npm install of the packed package failed:\n${stdout ?? ''}${stderr ?? ''}`, {
      cause: error,
    });
  }
  const packageDir = join(dir, 'node_modules', 'nestjs-phone-verification');
  return { dir, packageDir, installLog, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A CommonJS host's TypeScript settings, as Nest's starter has them (module and resolution `nodenext`). */
const CJS_HOST_TSCONFIG = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'ES2023',
    strict: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
    skipLibCheck: true,
    // Node's types are the compiler's, not the host's: the app installs nothing but the package and its peers.
    typeRoots: [join(root, 'node_modules', '@types')],
    types: ['node'],
    rootDir: 'src',
    outDir: 'dist',
  },
  include: ['src'],
};

/**
 * Writes both hosts into the app: `main.mjs`, an ES-module host in plain JavaScript, and `dist/main.js`, a
 * TypeScript host compiled by tsc to CommonJS `require()` calls (the app has no `"type"`). tsc type-checks the
 * host against the installed package's declarations, so types that do not resolve for CommonJS fail here.
 */
export function writeHosts(app: PackedApp): void {
  copyFileSync(join(root, 'test/package/host-app.fixture.mjs'), join(app.dir, 'main.mjs'));
  writeFileSync(join(app.dir, 'tsconfig.json'), JSON.stringify(CJS_HOST_TSCONFIG));
  mkdirSync(join(app.dir, 'src'));
  copyFileSync(join(root, 'test/package/cjs-host.fixture.cts'), join(app.dir, 'src', 'main.ts'));
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', app.dir], {
    cwd: app.dir,
    encoding: 'utf8',
  });
}

/** A host app process: its address, what it printed at boot, and the JSON lines it printed since. */
export interface HostApp {
  url: string;
  ready: Record<string, unknown>;
  lines: Record<string, unknown>[];
  /** Ends the process; resolves once it has exited, so none of its pipes outlives the suite. */
  stop(): Promise<void>;
}

/**
 * Starts `node <script> <args>` in the app folder and waits for the JSON line with its `port`. A host that
 * exits first fails with what it wrote to stderr (so a resolution error reads as itself in the test's output).
 */
export async function startHostApp(dir: string, script: string, args: string[]): Promise<HostApp> {
  const child: ChildProcess = spawn(process.execPath, [join(dir, script), ...args], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: cleanEnv(),
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const lines: Record<string, unknown>[] = [];
  const ready = await new Promise<Record<string, unknown>>((resolveReady, reject) => {
    child.once('exit', (code) => reject(new Error(`host app exited with ${code}:\n${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (typeof parsed.port === 'number') resolveReady(parsed);
      else lines.push(parsed);
    });
  });
  return {
    url: `http://127.0.0.1:${String(ready.port)}`,
    ready,
    lines,
    stop: () => {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A suite's packed app, its sandbox, and an ES-module and a CommonJS host verifying against it. */
export interface PackedHosts {
  readonly app: PackedApp;
  readonly sb: VerificationSandbox;
  readonly esm: HostApp;
  readonly cjs: HostApp;
}

/**
 * Before the suite: the packed package installed with `peers` (and `dependencies` pinned), both hosts
 * written and started against a sandbox; after it, all of it stopped and removed.
 */
export function packedHosts(peers: HostPeers, dependencies?: HostPeers): PackedHosts {
  const suite = {} as { -readonly [K in keyof PackedHosts]: PackedHosts[K] };
  beforeAll(async () => {
    suite.app = installPackedPackage(peers, dependencies);
    writeHosts(suite.app);
    suite.sb = await VerificationSandbox.start({ port: 0 });
    const args = [suite.sb.url, suite.sb.demoAccount.apiKey, suite.sb.demoAccount.apiSecret];
    [suite.esm, suite.cjs] = await Promise.all([
      startHostApp(suite.app.dir, 'main.mjs', args),
      startHostApp(suite.app.dir, 'dist/main.js', args),
    ]);
  }, 240_000);
  afterAll(async () => {
    await Promise.all([suite.esm?.stop(), suite.cjs?.stop()]);
    await suite.sb?.close();
    suite.app?.remove();
  });
  return suite;
}

/** Runs a CommonJS script in the app folder and returns what it printed. */
export function runCommonJs(dir: string, source: string): string {
  writeFileSync(join(dir, 'probe.cjs'), source);
  return execFileSync(process.execPath, [join(dir, 'probe.cjs')], {
    cwd: dir,
    encoding: 'utf8',
    env: cleanEnv(),
  });
}

/** Every file under `dir`, as paths relative to it. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
}
