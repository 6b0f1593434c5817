/**
 * Module hooks for a child Node process that must run the package as if none of its optional peers
 * (`@nestjs/terminus`, `prom-client`, `@nestjs/swagger`, `axios` and `@nestjs/axios`, `ioredis`, `redis`, `@opentelemetry/api`)
 * were installed: resolving any of them (from anywhere,
 * statically or with import()) fails with ERR_MODULE_NOT_FOUND, exactly as in an app that does not
 * depend on them. The same hooks run the TypeScript sources directly (a `.js` import of a `.ts` file is mapped to the `.ts` and
 * transpiled alone, as jest's transform does), so the test needs no build.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const HIDDEN_PACKAGES = [
  '@nestjs/terminus',
  'prom-client',
  '@nestjs/swagger',
  'axios',
  '@nestjs/axios',
  'ioredis',
  'redis',
  '@opentelemetry/api',
];

function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

export async function resolve(specifier, context, nextResolve) {
  if (HIDDEN_PACKAGES.includes(packageName(specifier))) {
    const error = new Error(`Cannot find package '${specifier}' imported from ${context.parentURL}`);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const source = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
    if (existsSync(fileURLToPath(source))) return { url: source.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

const COMPILER_OPTIONS = {
  module: ts.ModuleKind.ESNext,
  target: ts.ScriptTarget.ES2022,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  useDefineForClassFields: false,
  esModuleInterop: true,
};

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const fileName = fileURLToPath(url);
  const { outputText } = ts.transpileModule(await readFile(fileName, 'utf8'), {
    compilerOptions: COMPILER_OPTIONS,
    fileName,
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}
