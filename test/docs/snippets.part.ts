/**
 * Every ```ts block of the README and docs/ type-checks against the package as a host imports it
 * (`nestjs-phone-verification`, `/client`, `/testing`, … resolved to the declarations in dist/ that the
 * exports map of package.json names; `npm test` builds them first), all blocks in one program. A block may
 * leave out what a host already has: the host's own names (HOST) and imports of the package's or Nest's
 * names (the test imports a name the block does not declare from the first of ENTRIES that exports it,
 * unless the block imports from that one: then it imports all it uses from it). A block marked
 * `<!-- snippet: fragment -->` just before it leaves out members of its class: it is checked all the same,
 * but a `this.<member>` it does not declare (and there is one) is not an error. Any other error fails the
 * test with its page, block and message: a renamed option, a wrong import path, a method not there.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { readDoc, ROOT } from './source-program.js';

const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)].filter((p) =>
  p.endsWith('.md'),
);
const FRAGMENT = '<!-- snippet: fragment -->';
/** Where a name a block uses but does not import comes from, first match wins. */
const ENTRIES = [
  'nestjs-phone-verification',
  'nestjs-phone-verification/client',
  'nestjs-phone-verification/testing',
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/platform-express',
  '@nestjs/platform-fastify',
  '@nestjs/config',
  '@nestjs/event-emitter',
];
/** The host's own names the blocks use: its page, its options, its users. */
const HOST = `
import type { VerificationModuleOptions } from 'nestjs-phone-verification';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
declare global {
  const render: (state: unknown) => void;
  const detectDevice: () => 'desktop' | 'mobile';
  const startButton: HTMLButtonElement, codeForm: HTMLFormElement;
  const phoneInput: HTMLInputElement, codeInput: HTMLInputElement;
  const auth: { token(): string };
  const options: VerificationModuleOptions, northOptions: VerificationModuleOptions;
  const baseUrl: string, apiKey: string, apiSecret: string;
  /** One app for the Express and the Fastify lines of a block that shows both. */
  const app: NestExpressApplication & NestFastifyApplication;
  /** What the host's auth guard puts on the request. */
  type AuthedRequest = { user?: { id: string } };
}
export {};
`;
const HOST_FILES: Record<string, string> = {
  'users.service.ts': `export type User = { id: string };
export class Users { authenticate(token?: string): User | undefined { return token ? { id: token } : undefined; } }`,
};

interface Block {
  page: string;
  /** 1-based among the page's ts blocks. */
  index: number;
  line: number;
  fragment: boolean;
  code: string;
}

function blocks(page: string): Block[] {
  const lines = readDoc(page).split('\n');
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i]!)) continue;
    const end = lines.indexOf('```', i + 1);
    found.push({
      page,
      index: found.length + 1,
      line: i + 1,
      fragment:
        lines
          .slice(0, i)
          .findLast((l) => l.trim() !== '')
          ?.trim() === FRAGMENT,
      code: lines.slice(i + 1, end).join('\n'),
    });
    i = end;
  }
  return found;
}

/** `paths` from the exports map: `nestjs-phone-verification/client` is `dist/client/index.d.ts`. */
function paths(): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { types?: string }>;
  };
  const mapped: Record<string, string[]> = {};
  for (const [sub, target] of Object.entries(pkg.exports)) {
    const types = typeof target === 'string' ? undefined : target.types;
    if (!types) continue;
    mapped[join(pkg.name, sub)] = [join(ROOT, types)];
  }
  return mapped;
}

const DIR = join(ROOT, 'test/docs/snippet');
const fileOf = (block: Block) => join(DIR, `${block.page.replace(/\W/g, '-')}-${block.index}.ts`);

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
  types: ['node'],
  strict: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  skipLibCheck: true,
  moduleDetection: ts.ModuleDetectionKind.Force,
  noEmit: true,
  paths: paths(),
};

const parsed = new Map<string, ts.SourceFile | undefined>();

function program(files: Map<string, string>): ts.Program {
  const host = ts.createCompilerHost(OPTIONS);
  const { getSourceFile, fileExists, readFile, directoryExists } = host;
  host.directoryExists = (name) => name === DIR || directoryExists!.call(host, name);
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name);
  host.readFile = (name) => files.get(name) ?? readFile.call(host, name);
  host.getSourceFile = (name, version, ...rest) => {
    if (files.has(name)) return ts.createSourceFile(name, files.get(name)!, version);
    // Library files parsed once for both programs.
    if (!parsed.has(name)) parsed.set(name, getSourceFile.call(host, name, version, ...rest));
    return parsed.get(name);
  };
  return ts.createProgram([...files.keys()], OPTIONS, host);
}

/** The names a binding binds: `x`, `[session]`, `{ a, b: c }`. */
const bound = (name: ts.BindingName): string[] =>
  ts.isIdentifier(name)
    ? [name.text]
    : name.elements.flatMap((e) => (ts.isOmittedExpression(e) ? [] : bound(e.name)));

/** The names a block declares or imports at its top. */
function topLevelNames(file: ts.SourceFile): string[] {
  return file.statements.flatMap((statement): string[] => {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      return [
        ...(clause?.name ? [clause.name.text] : []),
        ...(bindings && ts.isNamedImports(bindings) ? bindings.elements.map((e) => e.name.text) : []),
        ...(bindings && ts.isNamespaceImport(bindings) ? [bindings.name.text] : []),
      ];
    }
    if (ts.isVariableStatement(statement))
      return statement.declarationList.declarations.flatMap((d) => bound(d.name));
    const name = (statement as { name?: ts.Node }).name;
    return name && ts.isIdentifier(name) ? [name.text] : [];
  });
}

/** Whether a fragment may leave this out: a member of its own class. */
const leftOut = (diagnostic: ts.Diagnostic): boolean =>
  diagnostic.code === 2339 &&
  diagnostic.file!.text.slice(diagnostic.start! - 5, diagnostic.start) === 'this.';

function check(all: Block[]): { block: Block; errors: string[] }[] {
  const files = new Map<string, string>([[join(DIR, 'host.d.ts'), HOST]]);
  for (const [name, text] of Object.entries(HOST_FILES)) files.set(join(DIR, name), text);
  const entries = ENTRIES.map((entry, i) => `import * as e${i} from '${entry}';`).join('\n');
  files.set(join(DIR, 'entries.ts'), `${entries}\nexport { ${ENTRIES.map((_, i) => `e${i}`).join(', ')} };`);
  for (const block of all) files.set(fileOf(block), block.code);

  // The names each entry exports (a program of the entries alone: binding, no checking), then each block's
  // names that some entry exports and the block does not declare at its top, imported from the first.
  const first = program(files);
  const checker = first.getTypeChecker();
  const entryFile = first.getSourceFile(join(DIR, 'entries.ts'))!;
  const exported = entryFile.statements.filter(ts.isImportDeclaration).map((statement) => {
    const module = checker.getSymbolAtLocation(statement.moduleSpecifier);
    return new Set(module ? checker.getExportsOfModule(module).map((s) => s.name) : []);
  });
  for (const block of all) {
    const source = ts.createSourceFile('block.ts', block.code, ts.ScriptTarget.ES2022);
    const declared = new Set(topLevelNames(source));
    // An entry the block imports from is one it imports every name it uses from.
    const named = new Set(
      source.statements
        .filter(ts.isImportDeclaration)
        .map((statement) => (statement.moduleSpecifier as ts.StringLiteral).text),
    );
    const used = new Set(
      [...block.code.matchAll(/[A-Za-z_$][\w$]*/g)].map((m) => m[0]).filter((n) => !declared.has(n)),
    );
    const imports = ENTRIES.map((entry, i) => {
      if (named.has(entry)) return '';
      const names = [...used].filter((name) => exported.findIndex((e) => e.has(name)) === i);
      return names.length ? `import { ${names.join(', ')} } from '${entry}';\n` : '';
    }).join('');
    files.set(fileOf(block), imports + block.code);
  }

  const second = program(files);
  return all.map((block) => {
    const file = second.getSourceFile(fileOf(block))!;
    const diagnostics = [...second.getSyntacticDiagnostics(file), ...second.getSemanticDiagnostics(file)];
    const kept = diagnostics.filter((d) => !(block.fragment && leftOut(d)));
    return {
      block,
      errors: [
        ...(block.fragment && kept.length === diagnostics.length
          ? ['marked a fragment, but nothing is left out']
          : []),
        ...kept.map((d) => {
          const { line } = file.getLineAndCharacterOfPosition(d.start ?? 0);
          const code = file.text.split('\n')[line]!.trim();
          return `TS${d.code} at \`${code}\`: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
        }),
      ],
    };
  });
}

describe('code blocks of the README and docs/ compile against the package', () => {
  const all = PAGES.flatMap(blocks);

  it('finds the blocks, and every fragment marker stands before one', () => {
    expect({ built: existsSync(join(ROOT, 'dist/index.d.ts')) }).toEqual({ built: true }); // npm run build
    expect(all.length).toBeGreaterThanOrEqual(8);
    for (const page of PAGES) {
      const markers = readDoc(page).split(FRAGMENT).length - 1;
      expect({ page, markers }).toEqual({ page, markers: blocks(page).filter((b) => b.fragment).length });
    }
  });

  it('each block type-checks (page, block and TS error on failure)', () => {
    const failing = check(all)
      .filter((r) => r.errors.length > 0)
      .map((r) => ({
        block: `${r.block.page} block ${r.block.index} (line ${r.block.line})`,
        errors: r.errors,
      }));
    expect(failing).toEqual([]);
  });
});
