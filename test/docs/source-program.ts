/**
 * What the docs tests read of the code, through the TypeScript compiler rather than file paths: the
 * option fields reachable from the type `forRoot` takes (as `src/index.ts` exports it), and every name
 * declared in `src/`. Files move and split; the exported type and the declared names are what the docs
 * promise.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SRC = join(ROOT, 'src');

/** Every `.ts` file under `src/` but the specs. */
export function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !/\.spec\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

let cached: ts.Program | undefined;

/** One program over every source file (the browser entries included, hence the DOM library). */
export function sourceProgram(): ts.Program {
  if (cached) return cached;
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  cached = ts.createProgram(sourceFiles(), {
    ...config.options,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    noEmit: true,
  });
  return cached;
}

/** The symbol `src/index.ts` exports under `name`, aliases followed. */
export function exportedSymbol(name: string): ts.Symbol {
  const program = sourceProgram();
  const checker = program.getTypeChecker();
  const index = program.getSourceFile(join(SRC, 'index.ts'));
  const module = index && checker.getSymbolAtLocation(index);
  if (!module) throw new Error('src/index.ts has no module symbol');
  let symbol = checker.getExportsOfModule(module).find((s) => s.name === name);
  if (!symbol) throw new Error(`src/index.ts does not export ${name}`);
  if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  return symbol;
}

/** One option field: its path (`limits.spendCap.amount`, `testNumbers.numbers[].code`). */
export interface OptionField {
  path: string;
  /** The interface declaring the field (`RateLimit`), when it is one: `RateLimit.points` documents it everywhere. */
  declaredIn: string | undefined;
  /** Whether the field can hold a value other than a nested options object (a number, `false`, a function, a store). */
  hasValue: boolean;
  /** Whether nested option fields hang below it. */
  hasChildren: boolean;
}

const declaredInSrc = (symbol: ts.Symbol): boolean =>
  (symbol.declarations ?? []).some((d) => d.getSourceFile().fileName.startsWith(SRC + sep));

/**
 * Every field reachable from the options type `src/index.ts` exports for `forRoot`
 * (`VerificationModuleOptions`): nested option objects are followed (through unions, `false`
 * alternatives and arrays); functions, host-implemented interfaces (only methods, like a
 * `WebhookVerifier` or a `VerificationStore`), records keyed by method and library types are leaves.
 */
export function optionFields(typeName = 'VerificationModuleOptions'): OptionField[] {
  const checker = sourceProgram().getTypeChecker();
  const isFunction = (type: ts.Type) => checker.getNonNullableType(type).getCallSignatures().length > 0;

  /** The option objects among a field's alternatives, and whether any alternative is a plain value. */
  const alternatives = (type: ts.Type): { objects: { type: ts.Type; suffix: string }[]; value: boolean } => {
    const objects: { type: ts.Type; suffix: string }[] = [];
    let value = false;
    for (const member of type.isUnion() ? type.types : [type]) {
      if (member.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) continue;
      if (checker.isArrayType(member)) {
        const inner = alternatives(checker.getTypeArguments(member as ts.TypeReference)[0]!);
        objects.push(...inner.objects.map((o) => ({ type: o.type, suffix: `[]${o.suffix}` })));
        value ||= inner.value || inner.objects.length === 0;
        continue;
      }
      const props = checker.getPropertiesOfType(member);
      const optionObject =
        member.getCallSignatures().length === 0 &&
        props.length > 0 &&
        props.every(declaredInSrc) &&
        !props.every((p) => isFunction(checker.getTypeOfSymbol(p)));
      if (optionObject) objects.push({ type: member, suffix: '' });
      else value = true;
    }
    return { objects, value };
  };

  const fields: OptionField[] = [];
  const walk = (type: ts.Type, prefix: string) => {
    for (const property of checker.getPropertiesOfType(type)) {
      const path = prefix ? `${prefix}.${property.name}` : property.name;
      const declaration = property.declarations?.[0];
      const declaredIn =
        declaration && ts.isInterfaceDeclaration(declaration.parent)
          ? declaration.parent.name.text
          : undefined;
      const { objects, value } = alternatives(checker.getTypeOfSymbol(property));
      if (fields.some((f) => f.path === path)) continue;
      fields.push({ path, declaredIn, hasValue: value, hasChildren: objects.length > 0 });
      for (const object of objects) walk(object.type, path + object.suffix);
    }
  };
  walk(checker.getDeclaredTypeOfSymbol(exportedSymbol(typeName)), '');
  return fields;
}

/** The source file declaring a top-level variable `name` (e.g. the defaults object), wherever it lives. */
export function fileDeclaring(name: string): string {
  for (const file of sourceProgram().getSourceFiles()) {
    if (!file.fileName.startsWith(SRC + sep)) continue;
    for (const statement of file.statements)
      if (
        ts.isVariableStatement(statement) &&
        statement.declarationList.declarations.some((d) => ts.isIdentifier(d.name) && d.name.text === name)
      )
        return file.fileName;
  }
  throw new Error(`no file in src/ declares ${name}`);
}

/** The Markdown of a file under the repository root. */
export const readDoc = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** Markdown without its fenced code blocks (they hold examples, not citations). */
export const withoutFences = (markdown: string): string =>
  markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');

/** The inline code spans of some Markdown (fenced blocks left out). */
export function inlineCode(markdown: string): string[] {
  return [...withoutFences(markdown).matchAll(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g)].map((m) =>
    m[2]!.trim(),
  );
}
