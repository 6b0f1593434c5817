import { describe, expect, it } from '@jest/globals';
import { HttpException } from '@nestjs/common';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PhoneVerificationError } from './phone-verification.error.js';
import { VerificationClientError, VerificationError } from './verification.errors.js';
import { VerificationOptionsError } from './option-rules.js';
import { ProtectionRefusal } from './refusal-reason.js';
import { VerificationApiError, VerificationApiUnavailableError } from '../api/verification-api.error.js';
import { WireFormatError } from '../api/wire-format.error.js';
import { HttpTransportError } from '../api/http-transport.js';
import { VerificationStoreUnavailableError } from '../store/store-unavailable.error.js';
import { RedisDriverMissingError } from '../store/open-redis-client.js';
import { MemoryStore } from '../store/memory.store.js';
import { VerificationListenerError } from '../sessions/verification.tracker.js';
import { AssessmentRefusal } from '../protection/assess-start-hook.js';
import { RequireVerifiedPhone } from '../guard/verified-phone.decorators.js';
import { SandboxControlError } from '../testing/sandbox-control.client.js';
import { SandboxProblem } from '../testing/problem.js';
import { PayloadTooLarge } from '../testing/sandbox-http.js';
import { parseCliArgs } from '../testing/cli-args.js';
import * as server from '../index.js';
import * as testing from '../testing/index.js';

function thrownBy(call: () => unknown): Error {
  try {
    call();
  } catch (error) {
    return error as Error;
  }
  throw new Error('the call threw nothing');
}

// What a host's `catch (err) { if (err instanceof PhoneVerificationError) … }` sees, for every error the
// package throws on the server side: one root, and each class still tells its own kind apart.
const thrown: ReadonlyArray<[string, Error]> = [
  ['PhoneVerificationError', new PhoneVerificationError('failed')],
  ['VerificationError', new VerificationError('store down')],
  ['VerificationClientError', new VerificationClientError('not_found')],
  ['ProtectionRefusal', new ProtectionRefusal('start_ip_limit', 60)],
  ['AssessmentRefusal', new AssessmentRefusal({ decision: 'refuse', reason: 'risk' }, undefined)],
  ['VerificationOptionsError', new VerificationOptionsError('limits', 'is not an object')],
  ['VerificationApiError', new VerificationApiError({ operation: 'initiate', status: 402 })],
  [
    'VerificationApiUnavailableError',
    new VerificationApiUnavailableError({ operation: 'getSession', reason: 'timeout', code: 'ETIMEDOUT' }),
  ],
  ['WireFormatError', new WireFormatError('initiate: no id')],
  ['HttpTransportError', new HttpTransportError('ECONNRESET')],
  ['VerificationStoreUnavailableError', new VerificationStoreUnavailableError('get', 'ECONNREFUSED')],
  ['RedisDriverMissingError', new RedisDriverMissingError(['ioredis', 'redis'])],
  ['VerificationListenerError', new VerificationListenerError('verification.verified', 'req-1')],
  ['SandboxControlError', new SandboxControlError(404, 'not_found', 'no such request')],
  ['SandboxProblem', new SandboxProblem(400, 'validation_error', 'bad body')],
  // A bad argument: still the RangeError or TypeError the docs name, and the package's.
  ['RangeError', thrownBy(() => new MemoryStore({ maxEntries: 0 }))],
  ['TypeError', thrownBy(() => RequireVerifiedPhone({ within: -1 }))],
  ['PhoneVerificationError', thrownBy(() => parseCliArgs(['--port', 'x']))],
];

describe('PhoneVerificationError, the root of the server side', () => {
  it.each(thrown)('%s is a PhoneVerificationError and an Error, named after its kind', (name, error) => {
    expect(error).toBeInstanceOf(PhoneVerificationError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(String(error)).toMatch(new RegExp(`^${name}: `));
  });

  it('a bad argument stays the RangeError or TypeError the docs name', () => {
    expect(thrownBy(() => new MemoryStore({ maxEntries: 0 }))).toBeInstanceOf(RangeError);
    expect(thrownBy(() => RequireVerifiedPhone({ within: -1 }))).toBeInstanceOf(TypeError);
  });

  it('the sandbox’s 413 keeps its problem’s name', () => {
    expect(new PayloadTooLarge(10)).toBeInstanceOf(PhoneVerificationError);
    expect(new PayloadTooLarge(10).name).toBe('SandboxProblem');
  });

  it('every error class the package exports has a row above', () => {
    const rows = new Set<unknown>(thrown.map(([, error]) => error.constructor));
    const exported: unknown[] = [...Object.values(server), ...Object.values(testing)];
    const errorClasses = exported.filter(
      (value): value is { name: string; prototype: unknown } =>
        typeof value === 'function' && (value as { prototype: unknown }).prototype instanceof Error,
    );
    expect(errorClasses.filter((kind) => !rows.has(kind)).map((kind) => kind.name)).toStrictEqual([]);
  });

  it('the rendered line stays an HttpException, the rest never is (a host filter must not render an API 401 as its own)', () => {
    const rendered = thrown.filter(([, error]) => error instanceof HttpException).map(([name]) => name);
    expect(rendered).toStrictEqual([
      'VerificationError',
      'VerificationClientError',
      'ProtectionRefusal',
      'AssessmentRefusal',
    ]);
  });

  it('a subclass answers for its own kind only, not for the HttpException line or its siblings', () => {
    const rendered = new VerificationClientError('not_found');
    expect(rendered).not.toBeInstanceOf(VerificationApiError);
    expect(rendered).not.toBeInstanceOf(VerificationOptionsError);
    expect(new VerificationStoreUnavailableError('get', 'x')).not.toBeInstanceOf(VerificationApiError);
    expect(new VerificationApiError({ operation: 'initiate', status: 500 })).not.toBeInstanceOf(
      VerificationError,
    );
    expect(new SandboxProblem(400, undefined, 'x')).not.toBeInstanceOf(SandboxControlError);
  });

  it('errors of other origins are not the package’s', () => {
    for (const other of [
      new Error('x'),
      new TypeError('x'),
      new RangeError('x'),
      new HttpException('x', 400),
      null,
      undefined,
      'text',
      {},
    ]) {
      expect(other instanceof PhoneVerificationError).toBe(false);
    }
  });

  it('keeps a cause when given one', () => {
    const cause = new Error('socket');
    expect(new PhoneVerificationError('failed', { cause }).cause).toBe(cause);
  });
});

// The classes no host can construct (the store's deadline, the health read's) are held by the source: every
// error class of the server side descends from the root or from a line joined to it, and the server side
// throws no bare Error; the browser side's error classes descend from its own root.
function sources(dir: string): { file: string; text: string }[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
    .map((file) => ({ file, text: readFileSync(join(dir, file), 'utf8') }));
}

const ERROR_BASES = new Set(['Error', 'TypeError', 'RangeError', 'HttpException']);

function outsideFamily(files: { file: string; text: string }[], roots: ReadonlySet<string>): string[] {
  const parents = new Map<string, string>();
  for (const { text } of files)
    for (const [, name, parent] of text.matchAll(/class (\w+) extends (\w+)/g)) parents.set(name!, parent!);
  const orphans: string[] = [];
  for (const name of parents.keys()) {
    let kind: string | undefined = name;
    while (kind !== undefined && !roots.has(kind) && !ERROR_BASES.has(kind)) kind = parents.get(kind);
    if (kind !== undefined && ERROR_BASES.has(kind)) orphans.push(name);
  }
  return orphans;
}

describe('one error family per side, read from the source', () => {
  const root = new URL('..', import.meta.url).pathname;
  const browser = ['client', 'element'];
  const serverFiles = sources(root).filter(({ file }) => !browser.includes(file.split('/')[0]!));
  const joined = new Set(
    serverFiles.flatMap(({ text }) => [...text.matchAll(/joinErrorFamily\((\w+)\)/g)].map((m) => m[1]!)),
  );

  it('every server-side error class is under PhoneVerificationError', () => {
    expect(joined).toStrictEqual(
      new Set(['PhoneVerificationError', 'VerificationError', 'ArgumentRangeError', 'ArgumentTypeError']),
    );
    expect(outsideFamily(serverFiles, joined)).toStrictEqual([]);
  });

  it('the server side throws no error of another family', () => {
    // Not the hit-count guard StrykerJS writes into each file it mutates (`new Error('Stryker: …')`): under
    // `npm run test:mutation` this spec reads the instrumented copies.
    const bare = serverFiles
      .filter(({ text }) => /new (Range|Type|Syntax|)Error\((?!'Stryker: )/.test(text))
      .map(({ file }) => file);
    expect(bare).toStrictEqual([]);
  });

  it('every browser-side error class is under VerificationClientError', () => {
    const files = browser.flatMap((dir) => sources(join(root, dir)));
    expect(outsideFamily(files, new Set(['VerificationClientError']))).toStrictEqual([]);
  });
});
