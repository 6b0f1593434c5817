/**
 * docs/OPTIONS.md against the options type: every field a host can give `forRoot` is in the
 * reference, the reference names no field that does not exist, and each default it cites is the
 * code's. The fields come from the type `src/index.ts` exports (through the compiler, so the option
 * files may move and split); the defaults from `VERIFICATION_DEFAULTS`, wherever it is declared.
 */
import { describe, expect, it } from '@jest/globals';
import { pathToFileURL } from 'node:url';
import { fileDeclaring, optionFields, readDoc, withoutFences, type OptionField } from './source-program.js';

interface Row {
  /** The option paths the first cell names. */
  names: string[];
  /** The default cell. */
  default: string;
  line: string;
}

/** The rows of the reference's tables whose first cell names options (backticked). */
function referenceRows(markdown: string): Row[] {
  return withoutFences(markdown)
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line))
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .filter((cells) => cells[1] !== 'option')
    .map((cells) => ({
      names: [...cells[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!),
      default: cells[2] ?? '',
      line: cells.join(' | '),
    }))
    .filter((row) => row.names.length > 0);
}

/** A field is documented by its own path, or once for every use by its interface's name (`RateLimit.points`). */
const namesOf = (field: OptionField): string[] => {
  const leaf = field.path.split('.').at(-1)!;
  return field.declaredIn ? [field.path, `${field.declaredIn}.${leaf}`] : [field.path];
};

/** A value as the reference writes it: numbers with or without thousands separators, strings with or without quotes. */
function cites(cell: string, value: unknown): boolean {
  const plain = cell.replace(/(\d)[,_ ](?=\d{3}\b)/g, '$1');
  if (typeof value === 'number')
    return new RegExp(`(?<![\\d.])${String(value).replace('.', '\\.')}(?![\\d.])`).test(plain);
  if (typeof value === 'string') return plain.includes(value);
  if (typeof value === 'boolean') return plain.includes(String(value));
  return false;
}

/** The primitive leaves of a default, when it is small enough to be cited in one cell (a rate limit, a list). */
function citableLeaves(value: unknown): unknown[] | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'object') return [value];
  const leaves = Object.values(value as object);
  if (leaves.every((leaf) => typeof leaf !== 'object') && (Array.isArray(value) || leaves.length <= 2))
    return leaves;
  return undefined;
}

function defaultAt(defaults: object, path: string): unknown {
  let value: unknown = defaults;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !(key in value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

describe('docs/OPTIONS.md, the options reference', () => {
  const fields = optionFields();
  const rows = referenceRows(readDoc('docs/OPTIONS.md'));
  const documented = new Set(rows.flatMap((row) => row.names));

  it('reads the options type: nested objects, false alternatives and arrays are followed', () => {
    const paths = fields.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'api.baseUrl',
        'limits.spendCap.worstCasePrice',
        'limits.pumping.safeList.owners',
        'limits.startPerIp.points',
        'testNumbers.numbers[].phoneNumber',
        'store.url',
        'orchestration.fallback.stalledShare',
      ]),
    );
    // A host-implemented interface and a record keyed by method are leaves, not options to list.
    expect(paths.filter((p) => p.startsWith('webhooks.verifier.') || p.startsWith('store.get'))).toEqual([]);
    expect(paths.filter((p) => p.startsWith('orchestration.timeoutSeconds.'))).toEqual([]);
  });

  it('documents every option field a host can set', () => {
    const required = fields.filter((f) => f.hasValue || !f.hasChildren);
    const missing = required
      .filter((f) => !namesOf(f).some((name) => documented.has(name)))
      .map((f) => f.path);
    expect(missing).toEqual([]);
  });

  it('names no option that does not exist', () => {
    const known = new Set(fields.flatMap(namesOf));
    expect([...documented].filter((name) => !known.has(name))).toEqual([]);
  });

  it('cites the defaults the code applies', async () => {
    const { VERIFICATION_DEFAULTS } = (await import(
      pathToFileURL(fileDeclaring('VERIFICATION_DEFAULTS')).href
    )) as {
      VERIFICATION_DEFAULTS: object;
    };
    const checked: string[] = [];
    const wrong: string[] = [];
    for (const row of rows) {
      if (row.names.length !== 1) continue;
      // An object whose fields have rows of their own (`history.retentionDays`) is cited there.
      if ([...documented].some((n) => n.startsWith(`${row.names[0]}.`))) continue;
      const leaves = citableLeaves(defaultAt(VERIFICATION_DEFAULTS, row.names[0]!));
      if (!leaves) continue;
      checked.push(row.names[0]!);
      if (!leaves.every((leaf) => cites(row.default, leaf))) wrong.push(row.line);
    }
    expect(wrong).toEqual([]);
    // The check bites: the limits, the pumping thresholds and the routes' defaults are among those compared.
    expect(checked).toEqual(
      expect.arrayContaining([
        'api.timeoutMs',
        'limits.startPerIp',
        'limits.pumping.holdMs',
        'routes.bodyLimit',
      ]),
    );
  });

  it("cites orchestration.timeoutSeconds per method in the order of `methods`' default, voice apart", async () => {
    const { VERIFICATION_DEFAULTS } = (await import(
      pathToFileURL(fileDeclaring('VERIFICATION_DEFAULTS')).href
    )) as {
      VERIFICATION_DEFAULTS: { methods: string[]; orchestration: { timeoutSeconds: Record<string, number> } };
    };
    const { methods, orchestration } = VERIFICATION_DEFAULTS;
    const row = rows.find((r) => r.names.length === 1 && r.names[0] === 'orchestration.timeoutSeconds')!;
    expect(row.default.split('/').map(Number)).toEqual(methods.map((m) => orchestration.timeoutSeconds[m]));
    expect(row.line).toContain(`(voice ${orchestration.timeoutSeconds.voice})`);
  });
});
