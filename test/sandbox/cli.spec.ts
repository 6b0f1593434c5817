import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import {
  CLI_DEMO_API_KEY,
  CLI_DEMO_API_SECRET,
  CLI_DEMO_WEBHOOK_SECRET,
  parseCliArgs,
} from '../../src/testing/cli-args.js';
import { SandboxControlClient } from '../../src/testing/index.js';

describe('sandbox CLI arguments', () => {
  it('defaults to port 4010 on 127.0.0.1, the readable demo account, auto-delivery and control on', () => {
    expect(parseCliArgs([], {})).toEqual({
      help: false,
      options: {
        port: 4010,
        host: '127.0.0.1',
        control: true,
        demoAccount: {
          apiKey: CLI_DEMO_API_KEY,
          apiSecret: CLI_DEMO_API_SECRET,
          webhookSecret: CLI_DEMO_WEBHOOK_SECRET,
          webhookUrl: null,
          autoDeliver: true,
        },
      },
    });
    expect(CLI_DEMO_WEBHOOK_SECRET).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
  });

  it('reads the environment, and flags win over it', () => {
    const env = {
      SANDBOX_PORT: '5000',
      SANDBOX_HOST: '0.0.0.0',
      SANDBOX_API_KEY: 'env_key',
      SANDBOX_API_SECRET: 'env_secret',
      SANDBOX_WEBHOOK_SECRET: 'whsec_ZW52',
      SANDBOX_WEBHOOK_URL: 'http://127.0.0.1:3000/hooks',
    };
    const fromEnv = parseCliArgs([], env);
    expect(fromEnv.help).toBe(false);
    if (fromEnv.help) return;
    expect(fromEnv.options).toMatchObject({ port: 5000, host: '0.0.0.0' });
    expect(fromEnv.options.demoAccount).toMatchObject({
      apiKey: 'env_key',
      apiSecret: 'env_secret',
      webhookSecret: 'whsec_ZW52',
      webhookUrl: 'http://127.0.0.1:3000/hooks',
    });
    const flagged = parseCliArgs(
      ['--port', '0', '--api-key', 'flag_key', '--balance', '12.5', '--no-auto-deliver', '--no-control'],
      env,
    );
    if (flagged.help) throw new Error('unexpected help');
    expect(flagged.options).toMatchObject({ port: 0, control: false });
    expect(flagged.options.demoAccount).toMatchObject({
      apiKey: 'flag_key',
      balance: 12.5,
      autoDeliver: false,
    });
  });

  it('answers --help', () => {
    expect(parseCliArgs(['--help'], {})).toEqual({ help: true });
    expect(parseCliArgs(['-h'], {})).toEqual({ help: true });
  });

  it.each([
    [['--port', '70000']],
    [['--port', 'abc']],
    [['--balance', '1.234']],
    [['--balance', '-1']],
    [['--webhook-url', 'not a url']],
    [['--webhook-secret', 'plain']],
    [['--unknown']],
    [['positional']],
  ])('refuses %j', (argv) => {
    expect(() => parseCliArgs(argv, {})).toThrow();
  });

  it('package.json points the bin at the built CLI, which starts with a node shebang', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
    expect(pkg.bin['phone-verification-sandbox']).toBe('./dist/testing/cli.js');
    expect(readFileSync('src/testing/cli.ts', 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });
});

/**
 * The CLI as a process. The sandbox imports nothing outside src/testing but its errors' root (src/core's
 * phone-verification.error.ts, which imports nothing), so those files are transpiled to a temporary directory
 * here: the test needs no prior build and does not depend on the rest of the project.
 */
describe('sandbox CLI process', () => {
  let dir: string;
  let child: ChildProcessWithoutNullStreams | undefined;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pv-sandbox-cli-'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    const files = readdirSync('src/testing')
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))
      .map((f) => join('testing', f));
    mkdirSync(join(dir, 'testing'));
    mkdirSync(join(dir, 'core'));
    for (const file of [...files, join('core', 'phone-verification.error.ts')]) {
      const source = readFileSync(join('src', file), 'utf8');
      const { outputText } = ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      });
      writeFileSync(join(dir, file.replace(/\.ts$/, '.js')), outputText);
    }
  });
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  function run(args: string[], env: Record<string, string> = {}): ChildProcessWithoutNullStreams {
    return spawn(process.execPath, [join(dir, 'testing', 'cli.js'), ...args], {
      env: { ...process.env, ...env, NODE_OPTIONS: '' },
    });
  }

  function firstLines(proc: ChildProcessWithoutNullStreams, count: number): Promise<string[]> {
    return new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no output in time: ${out}`)), 10_000);
      proc.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const lines = out.split('\n');
        if (lines.length > count) {
          clearTimeout(timer);
          resolve(lines.slice(0, count));
        }
      });
      proc.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`exited ${code}: ${out}`));
      });
    });
  }

  it('starts, prints its URL and demo credentials, serves the API, and stops on SIGTERM', async () => {
    child = run(['--port', '0', '--api-secret', 'cli-secret'], { SANDBOX_API_KEY: 'cli_key' });
    const lines = await firstLines(child, 8);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(lines[0]!)![1]!;
    const text = lines.join('\n');
    expect(text).toContain('api_key:        cli_key');
    expect(text).toContain('api_secret:     cli-secret');
    expect(text).toContain(`webhook secret: ${CLI_DEMO_WEBHOOK_SECRET}`);

    const auth = `Basic ${Buffer.from('cli_key:cli-secret').toString('base64')}`;
    const balance = await fetch(`${url}/v1/balance`, { headers: { authorization: auth } });
    expect(await balance.json()).toEqual({ balance: { amount: 1000, currency: 'RUB' } });
    const started = await fetch(`${url}/v1/verify`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ phone_number: '+79990009999', method: 'sms' }),
    });
    const { request_id } = (await started.json()) as { request_id: string };
    // Auto-delivery is the CLI default: one second of sandbox clock later the code is out.
    const control = new SandboxControlClient(url);
    await control.advance(1000);
    expect((await control.getSession(request_id)).status).toBe('delivered');

    const exited = new Promise<number | null>((resolve) => child!.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    child = undefined;
  });

  it('exits with status 2 and the usage on a bad argument', async () => {
    const proc = run(['--port', 'x']);
    let err = '';
    proc.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
    expect(code).toBe(2);
    expect(err).toContain('--port must be an integer');
    expect(err).toContain('Usage: phone-verification-sandbox');
  });
});
