import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const OPTIONAL_PEERS = [
  '@nestjs/terminus',
  'prom-client',
  '@nestjs/swagger',
  'axios',
  '@nestjs/axios',
  'ioredis',
  'redis',
  '@opentelemetry/api',
];

/** Every file statically reachable from `entry` and the bare specifiers they import (type-only included). */
function staticImportGraph(entry: string): { files: string[]; bare: Map<string, string[]> } {
  const seen = new Set<string>();
  const bare = new Map<string, string[]>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      const specifier =
        (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
        statement.moduleSpecifier &&
        ts.isStringLiteral(statement.moduleSpecifier)
          ? statement.moduleSpecifier.text
          : undefined;
      if (specifier === undefined) continue;
      if (specifier.startsWith('.')) queue.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else bare.set(specifier, [...(bare.get(specifier) ?? []), relative(ROOT, file)]);
    }
  }
  return { files: [...seen].map((f) => relative(ROOT, f)), bare };
}

function runChild(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(
    process.execPath,
    [
      '--import',
      './test/operations/support/hide-optional-peers.register.mjs',
      'test/operations/support/without-optional-peers.child.ts',
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}

describe('optional peer dependencies (terminus, prom-client, swagger, axios, ioredis, redis, @opentelemetry/api)', () => {
  it('are never imported statically anywhere in the package entry point’s import graph', () => {
    const { files, bare } = staticImportGraph(resolve(ROOT, 'src/index.ts'));
    // The walk really covers the operations code that uses them (lazily).
    expect(files).toEqual(
      expect.arrayContaining([
        'src/account/verification-health.indicator.ts',
        'src/observability/verification-metrics.ts',
        'src/observability/verification-tracing.ts',
        'src/module/verification.module.ts',
        'src/http/verification.controller.ts',
        'src/webhooks/webhook.controller.ts',
        'src/api/axios-transport.ts',
        'src/store/open-redis-client.ts',
      ]),
    );
    expect(bare.has('@nestjs/common')).toBe(true);
    const offenders = OPTIONAL_PEERS.flatMap((peer) =>
      [...bare.entries()]
        .filter(([specifier]) => specifier === peer || specifier.startsWith(`${peer}/`))
        .map(([specifier, importers]) => `${specifier} ← ${importers.join(', ')}`),
    );
    expect(offenders).toEqual([]);
  });

  it('without them installed, the package boots, verifies, reports health, and refuses at boot each option that needs one, naming the package', async () => {
    const { code, stdout, stderr } = await runChild();
    expect({
      code,
      stderr: stderr.replace(/^.*ExperimentalWarning.*$\n?|^.*--trace-warnings.*$\n?/gm, ''),
    }).toEqual({
      code: 0,
      stderr: '',
    });
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    expect(result).toEqual({
      terminusHidden: true,
      promClientHidden: true,
      swaggerHidden: true,
      axiosHidden: true,
      redisHidden: true,
      startStatus: 201,
      healthUp: { verification: { status: 'up', balance: 1000, currency: 'RUB', threshold: 100 } },
      healthDegraded: {
        verification: {
          status: 'degraded',
          reason: 'balance_below_threshold',
          message: 'The prepaid balance is below 100 RUB',
          balance: 50,
          currency: 'RUB',
          threshold: 100,
        },
      },
      healthDown: {
        verification: {
          status: 'down',
          reason: 'balance_exhausted',
          message: expect.any(String),
          balance: 0,
          currency: 'RUB',
          threshold: 100,
        },
      },
      metricsBoot: {
        name: 'VerificationOptionsError',
        message: expect.stringContaining('"metrics.enabled" is true but prom-client is not installed'),
      },
      axiosBoot: {
        name: 'VerificationOptionsError',
        message: expect.stringContaining(
          '"api.transport" is \'axios\' but axios or @nestjs/axios is not installed: run `npm i axios @nestjs/axios`',
        ),
      },
      standaloneAxios: {
        name: 'VerificationOptionsError',
        message: expect.stringContaining(
          'VerificationApiClient: option "transport" is \'axios\' but axios or @nestjs/axios is not installed',
        ),
      },
      storeUrlBoot: {
        name: 'VerificationOptionsError',
        message: expect.stringContaining('"store.url" needs a Redis client library: run `npm i ioredis`'),
      },
    });
    // The URL's password is in no message.
    expect(stdout).not.toContain('s3cret-pass');
  }, 120_000);
});
