import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const root = resolve(process.cwd());

/** A fresh app folder with the packed package installed as users get it. */
export interface PackedApp {
  dir: string;
  /** Where the package was installed: `<dir>/node_modules/nestjs-phone-verification`. */
  packageDir: string;
  remove(): void;
}

/**
 * Packs the package (`npm pack`, so `files` and `exports` are what users get) and installs the tarball into
 * a fresh app folder. The app's other dependencies are the packages the repository has installed.
 */
export function installPackedPackage(): PackedApp {
  if (!existsSync(join(root, 'dist', 'index.js')))
    execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' });
  const dir = mkdtempSync(join(tmpdir(), 'pv-host-'));
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], {
    cwd: root,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .pop()!;
  const modules = join(dir, 'node_modules');
  const packageDir = join(modules, 'nestjs-phone-verification');
  mkdirSync(packageDir, { recursive: true });
  execFileSync('tar', ['-xzf', join(dir, tarball), '-C', packageDir, '--strip-components=1']);
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry.startsWith('.') || entry === 'nestjs-phone-verification') continue;
    symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
  }
  return { dir, packageDir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A host app process: its address, what it printed at boot, and the JSON lines it printed since. */
export interface HostApp {
  url: string;
  ready: Record<string, unknown>;
  lines: Record<string, unknown>[];
  stop(): void;
}

/**
 * Starts `node <script> <args>` in the app folder and waits for the JSON line with its `port`. A host that
 * exits first fails with what it wrote to stderr (so a resolution error reads as itself in the test's output).
 */
export async function startHostApp(dir: string, script: string, args: string[]): Promise<HostApp> {
  const child: ChildProcess = spawn(process.execPath, [join(dir, script), ...args], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '' },
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
    stop: () => void child.kill('SIGTERM'),
  };
}

/** Every file under `dir`, as paths relative to it. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
}
