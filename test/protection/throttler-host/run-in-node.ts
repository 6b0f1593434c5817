import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from '@swc/core';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Transpiles `src/` and the given test entry (each file alone, types stripped, with SWC and the options of
 * jest's transform, jest.config.js) into a throwaway folder inside the repository, so that Node resolves the
 * project's node_modules.
 */
function transpileForNode(entry: string): { dir: string; entryJs: string } {
  const dir = join(ROOT, 'test-output', `node-host-${randomUUID()}`);
  const files = [
    ...walk(join(ROOT, 'src')).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts')),
    entry,
  ];
  for (const file of files) {
    const out = join(dir, relative(ROOT, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(out), { recursive: true });
    const { code } = transformSync(readFileSync(file, 'utf8'), {
      filename: file,
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
        target: 'es2022',
        keepClassNames: true,
      },
      module: { type: 'es6' },
    });
    writeFileSync(out, code);
  }
  return { dir, entryJs: join(dir, relative(ROOT, entry)).replace(/\.ts$/, '.js') };
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

export interface NodeHost {
  /** `http://127.0.0.1:PORT` of each app the host announced, by name. */
  urls: Record<string, string>;
  stop(): Promise<void>;
}

const transpiled = new Map<string, { dir: string; entryJs: string }>();

/** Removes the transpiled copies made by this test file. */
export function removeTranspiled(): void {
  for (const { dir } of transpiled.values()) rmSync(dir, { recursive: true, force: true });
  transpiled.clear();
}

/**
 * Starts `entry` (a TypeScript file that prints `LISTENING <name> <port>` for each app it serves, then
 * `READY`) in a plain Node child process.
 */
export async function startNodeHost(entry: string, env: Record<string, string>): Promise<NodeHost> {
  if (!transpiled.has(entry)) transpiled.set(entry, transpileForNode(entry));
  const { entryJs } = transpiled.get(entry)!;
  const child: ChildProcess = spawn(process.execPath, [entryJs], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    // A host that does not close within 5 s is killed outright.
    const hard = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(hard);
  };
  try {
    const urls = await new Promise<Record<string, string>>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (!/^READY$/m.test(out)) return;
        const found: Record<string, string> = {};
        for (const [, name, port] of out.matchAll(/^LISTENING (\S+) (\d+)$/gm))
          found[name!] = `http://127.0.0.1:${port}`;
        resolve(found);
      });
      child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
      child.once('exit', (code) => reject(new Error(`host exited with ${code}: ${err.slice(0, 2000)}`)));
    });
    return { urls, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
