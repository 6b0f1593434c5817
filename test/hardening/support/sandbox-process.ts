/**
 * The sandbox in a child process, so that a soak's heap figures are the host's alone (the
 * sandbox keeps every session it ever made). Its sources (src/testing and what it imports of
 * src/core, its errors' root) are compiled to a temporary folder first, so the child runs the current code
 * without depending on a build of the package.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export interface SandboxProcess {
  url: string;
  stop(): Promise<void>;
}

export interface SandboxProcessOptions {
  apiKey: string;
  apiSecret: string;
  webhookSecret: string;
  balance: number;
}

export async function startSandboxProcess(options: SandboxProcessOptions): Promise<SandboxProcess> {
  const root = resolve(process.cwd());
  const outDir = mkdtempSync(join(tmpdir(), 'pv-sandbox-'));
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  execFileSync(
    process.execPath,
    [
      tsc,
      join(root, 'src/testing/cli.ts'),
      '--ignoreConfig',
      '--outDir',
      outDir,
      '--rootDir',
      join(root, 'src'),
      '--module',
      'NodeNext',
      '--moduleResolution',
      'NodeNext',
      '--target',
      'ES2022',
      '--types',
      'node',
      '--skipLibCheck',
    ],
    { cwd: root, stdio: 'ignore' },
  );
  writeFileSync(join(outDir, 'package.json'), '{ "type": "module" }');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(outDir, 'testing', 'cli.js'),
      '--port',
      '0',
      '--api-key',
      options.apiKey,
      '--api-secret',
      options.apiSecret,
      '--webhook-secret',
      options.webhookSecret,
      '--balance',
      String(options.balance),
      '--no-auto-deliver',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } },
  );
  const url = await new Promise<string>((resolveUrl, reject) => {
    child.once('exit', (code) => reject(new Error(`the sandbox process exited with ${code}`)));
    // Every line is read (a full pipe would stall the child); the first names the URL.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) resolveUrl(match[1]!);
    });
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(outDir, { recursive: true, force: true });
    },
  };
}
