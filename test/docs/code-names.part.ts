/**
 * The code names `docs/` and the README cite exist in the code: a class, function or constant cited in backticks is
 * declared in `src/` (a member after a dot, `JourneyState.load`, is a member of it), a cited file or
 * folder exists, and a dotted option path (`statusStream.maxPerClient`) is a field of the options type.
 * Renaming a class without its docs fails here. Lower-case single words, snake_case payload fields,
 * routes and event names are not code names; the few external names the docs cite are listed below.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync } from 'node:fs';
import { join, sep } from 'node:path';
import ts from 'typescript';
import { inlineCode, optionFields, readDoc, ROOT, SRC, sourceProgram } from './source-program.js';

/**
 * Names cited in docs/ that are neither declared in src/ nor imported there from a library: a
 * library's methods and a Nest decorator the docs recommend, and a name outside src/.
 */
const EXTERNAL_NAMES = new Set([
  'NO_PROXY', // read by axios from the environment
  'createCluster', // node-redis
  'ConfigModule', // @nestjs/config, in the host recipe
  'ConfigService',
  'SkipThrottle', // @nestjs/throttler, for webhooks.decorators
  'TracerProvider', // the OpenTelemetry SDK a host registers
  'AsyncLocalStorageContextManager',
  'GqlVerifiedPhoneGuard', // the host's own class in the GraphQL recipe
  'EventEmitterModule', // @nestjs/event-emitter, which the host imports
  'FileTypeValidator', // @nestjs/common, named in the README's Node 20 note
  'useClass', // ConfigurableModuleBuilder's async options
  'emitAsync', // EventEmitter2
  'getStatus', // HttpException
]);

/** Top-level folders a cited path may start with; anything else is resolved under src/. */
const REPO_FOLDERS = ['src', 'test', 'bench', 'etc', 'docs', 'sample-app', '.ci'];

interface Declared {
  /** Names declared in src/, imported there from a package, or written there as a string (an environment variable). */
  names: Set<string>;
  /** Declarations of the names that may carry members (classes, interfaces, types, variables, functions). */
  holders: Map<string, ts.Declaration[]>;
}

function declaredNames(): Declared {
  const program = sourceProgram();
  const names = new Set<string>();
  const holders = new Map<string, ts.Declaration[]>();
  const add = (name: ts.Node | undefined, holder?: ts.Declaration) => {
    if (!name || !(ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name))) return;
    names.add(name.text);
    if (holder) holders.set(name.text, [...(holders.get(name.text) ?? []), holder]);
  };
  for (const file of program.getSourceFiles()) {
    if (!file.fileName.startsWith(SRC + sep)) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && !(node.moduleSpecifier as ts.StringLiteral).text.startsWith('.')) {
        const bindings = node.importClause?.namedBindings;
        if (bindings && ts.isNamedImports(bindings))
          for (const element of bindings.elements) add(element.name);
        add(node.importClause?.name);
      }
      if (ts.isStringLiteral(node) && /^[A-Z][A-Za-z0-9_]+$/.test(node.text)) names.add(node.text);
      if (ts.isPropertyAccessExpression(node) && /^[A-Z][A-Z0-9_]+$/.test(node.name.text))
        names.add(node.name.text);
      if (
        ts.isClassDeclaration(node) ||
        ts.isClassExpression(node) ||
        ts.isInterfaceDeclaration(node) ||
        ts.isTypeAliasDeclaration(node) ||
        ts.isEnumDeclaration(node) ||
        ts.isFunctionDeclaration(node) ||
        ts.isVariableDeclaration(node)
      )
        add(node.name, node);
      else if (
        ts.isMethodDeclaration(node) ||
        ts.isMethodSignature(node) ||
        ts.isPropertyDeclaration(node) ||
        ts.isPropertySignature(node) ||
        ts.isGetAccessorDeclaration(node) ||
        ts.isPropertyAssignment(node) ||
        ts.isEnumMember(node)
      )
        add(node.name);
      else if (ts.isShorthandPropertyAssignment(node)) add(node.name);
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return { names, holders };
}

/** Whether `holder` (a declared name) has the member `member`, on its instance or its static side. */
function hasMember(declared: Declared, holder: string, member: string): boolean {
  const checker = sourceProgram().getTypeChecker();
  for (const declaration of declared.holders.get(holder) ?? []) {
    const symbol = checker.getSymbolAtLocation((declaration as ts.NamedDeclaration).name!);
    if (!symbol) continue;
    const sides = [checker.getTypeOfSymbolAtLocation(symbol, declaration)];
    if (symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias))
      sides.push(checker.getDeclaredTypeOfSymbol(symbol));
    if (sides.some((type) => checker.getPropertyOfType(checker.getApparentType(type), member))) return true;
  }
  return false;
}

/** Every file's base name under a folder, for a bare `file.ts` citation. */
function baseNames(dir: string): Set<string> {
  const names = new Set<string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('dist')) continue;
      if (entry.isDirectory()) walk(join(d, entry.name));
      else names.add(entry.name);
    }
  };
  walk(dir);
  return names;
}

type Citation =
  | { kind: 'path'; path: string }
  | { kind: 'name'; name: string; members: string[] }
  | { kind: 'option'; path: string };

/** Top-level options with fields below them: a dotted path starting with one is an option path. */
const TOP_LEVEL_OPTIONS = new Set(
  optionFields()
    .filter((f) => f.hasChildren && !f.path.includes('.'))
    .map((f) => f.path),
);

/** What a backticked span cites, if it is a code name at all. */
export function citationOf(span: string): Citation | undefined {
  // A file or folder: `src/options/`, `core/journey.ts`, `pumping-rules.ts`.
  if (
    /^[\w.-]+(\/[\w.-]+)*\/?$/.test(span) &&
    (span.endsWith('/') || /\.(ts|tsx|mjs|js|md|json)$/.test(span))
  ) {
    if (/^(dist|dist-bench|node_modules)\//.test(span)) return undefined;
    if (!span.includes('/') && !/\.(ts|tsx|mjs)$/.test(span) && !span.endsWith('/')) return undefined;
    return { kind: 'path', path: span };
  }
  // An identifier, dotted members, an optional call and nothing else: `JourneyState.load`, `isoTime(date)`, `@VerifiedPhone()`.
  const match = /^@?([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(\(.*\))?$/s.exec(span);
  if (!match) return undefined;
  const [first, ...members] = match[1]!.split('.');
  if (TOP_LEVEL_OPTIONS.has(first!) && members.length > 0) return { kind: 'option', path: match[1]! };
  if (/^[A-Z][A-Z0-9]*_[A-Z0-9_]+$/.test(first!)) return { kind: 'name', name: first!, members };
  if (/^[A-Z][A-Z0-9]*$/.test(first!)) return undefined; // GET, RUB, RU: not code names
  // PascalCase of two words at least: one word (`Origin`, `Secure`, `Promise`) is as often a header or prose.
  if (/^[A-Z][a-z0-9]+[A-Z]/.test(first!)) return { kind: 'name', name: first!, members };
  if (/^[A-Z]/.test(first!)) return undefined;
  if (/^[a-z][a-z0-9]*[A-Z]/.test(first!) && !first!.includes('_'))
    return { kind: 'name', name: first!, members: [] };
  return undefined; // a lower-case word, a snake_case field, an event name (`verification.verified`)
}

function docsFiles(): string[] {
  return readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
}

describe('code names cited in docs/', () => {
  const declared = declaredNames();
  const options = new Set(optionFields().map((f) => f.path));
  const files = new Set([
    ...baseNames(SRC),
    ...baseNames(join(ROOT, 'test')),
    ...baseNames(join(ROOT, 'bench')),
  ]);

  /** Why a citation does not hold, or undefined when it does. */
  function problem(citation: Citation): string | undefined {
    switch (citation.kind) {
      case 'path': {
        const path = citation.path.replace(/\/$/, '');
        if (!citation.path.includes('/')) return files.has(path) ? undefined : 'no such file';
        const top = path.split('/')[0]!;
        const candidates = REPO_FOLDERS.includes(top)
          ? [join(ROOT, path)]
          : [join(SRC, path), join(ROOT, path)];
        return candidates.some((c) => existsSync(c)) ? undefined : 'no such path';
      }
      case 'option':
        return options.has(citation.path) ? undefined : 'no such option';
      case 'name': {
        if (EXTERNAL_NAMES.has(citation.name) || citation.name in globalThis) return undefined;
        if (!declared.names.has(citation.name)) return 'not declared in src/';
        // One level of members is checked (`JourneyState.load`); deeper ones belong to the member's type.
        const member = citation.members[0];
        if (member !== undefined && !hasMember(declared, citation.name, member)) return `no member ${member}`;
        return undefined;
      }
    }
  }

  it('finds the citations it is meant to check', () => {
    expect(citationOf('JourneyState.load')).toEqual({
      kind: 'name',
      name: 'JourneyState',
      members: ['load'],
    });
    expect(citationOf('isoTime(date)')).toEqual({ kind: 'name', name: 'isoTime', members: [] });
    expect(citationOf('@RequireVerifiedPhone({ within: 600_000 })')).toMatchObject({
      name: 'RequireVerifiedPhone',
    });
    expect(citationOf('core/journey.ts')).toEqual({ kind: 'path', path: 'core/journey.ts' });
    expect(citationOf('statusStream.maxPerClient')).toEqual({
      kind: 'option',
      path: 'statusStream.maxPerClient',
    });
    for (const notCode of ['verification_id', 'verification.verified', 'owner', 'GET /v1/verify/{id}', 'RUB'])
      expect(citationOf(notCode)).toBeUndefined();
  });

  it('fails on a renamed class, a missing member, a moved file and an unknown option', () => {
    const wrong: Citation[] = [
      { kind: 'name', name: 'VerificationTrackerService', members: [] },
      { kind: 'name', name: 'JourneyState', members: ['loadAll'] },
      { kind: 'name', name: 'rankCandidates', members: [] },
      { kind: 'path', path: 'src/operations/nothing-here.ts' },
      { kind: 'option', path: 'statusStream.maxPerHost' },
    ];
    expect(wrong.map(problem).every((p) => p !== undefined)).toBe(true);
    expect(problem({ kind: 'name', name: 'VerificationTracker', members: ['observe'] })).toBeUndefined();
  });

  it.each(['README.md', ...docsFiles()])('%s cites only names, paths and options that exist', (file) => {
    const broken = inlineCode(readDoc(file)).flatMap((span) => {
      const citation = citationOf(span);
      const why = citation && problem(citation);
      return why ? [`\`${span}\`: ${why}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('lists no library name the docs no longer cite', () => {
    const cited = new Set(
      ['README.md', ...docsFiles()].flatMap((file) =>
        inlineCode(readDoc(file)).flatMap((span) => {
          const citation = citationOf(span);
          return citation?.kind === 'name' ? [citation.name] : [];
        }),
      ),
    );
    expect([...EXTERNAL_NAMES].filter((name) => !cited.has(name))).toEqual([]);
  });

  it('every relative link in docs/ and the README reaches a file', () => {
    const broken = ['README.md', ...docsFiles()].flatMap((file) =>
      [...readDoc(file).matchAll(/\]\(([^)\s]+)\)/g)]
        .map((m) => m[1]!)
        .filter((link) => !/^(https?:|mailto:|#)/.test(link))
        .filter((link) => !existsSync(join(ROOT, file === 'README.md' ? '' : 'docs', link.split('#')[0]!)))
        .map((link) => `${file}: ${link}`),
    );
    expect(broken).toEqual([]);
  });
});
