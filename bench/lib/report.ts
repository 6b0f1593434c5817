/** What every benchmark returns, and how `npm run bench` prints it (Markdown tables, pasteable into docs). */

export type Cell = string | number | boolean | null | undefined;

/** One printed table: a header row and data rows; rows with a goal carry a PASS/MISS verdict column. */
export interface BenchTable {
  title: string;
  columns: string[];
  rows: Cell[][];
  /** Lines printed under the table (what was measured, how). */
  notes?: string[];
}

/** A goal and whether the measured value meets it; `pass` undefined = not measured (e.g. a missing route). */
export interface Verdict {
  pass: boolean | undefined;
}

export function verdict(pass: boolean | undefined): string {
  return pass === undefined ? 'n/a' : pass ? 'PASS' : 'MISS';
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Percentile of raw samples (nearest rank). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** A number with a fixed count of decimals, or its text when it is not finite. */
export function fmt(value: number | undefined, decimals = 0): string {
  if (value === undefined || !Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

export function formatTable(table: BenchTable): string {
  const text = (cell: Cell): string =>
    cell === undefined || cell === null ? '' : typeof cell === 'boolean' ? verdict(cell) : String(cell);
  const rows = table.rows.map((row) => table.columns.map((_, i) => text(row[i])));
  const widths = table.columns.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const out = [`### ${table.title}`, '', line(table.columns), line(widths.map((w) => '-'.repeat(w)))];
  for (const row of rows) out.push(line(row));
  if (table.notes?.length) out.push('', ...table.notes.map((n) => `- ${n}`));
  return out.join('\n');
}

/**
 * Rows from a benchmark another engineer wrote (an array of plain objects, or `{ title?, rows }`):
 * the columns are the union of the objects' keys, in first-seen order.
 */
export function tableFromObjects(title: string, value: unknown): BenchTable {
  const holder = value as { title?: unknown; rows?: unknown; columns?: unknown };
  if (holder && Array.isArray(holder.columns) && Array.isArray(holder.rows))
    return {
      title: typeof holder.title === 'string' ? holder.title : title,
      columns: holder.columns as string[],
      rows: holder.rows as Cell[][],
    };
  const rows = Array.isArray(value)
    ? value
    : Array.isArray(holder?.rows)
      ? (holder.rows as unknown[])
      : [value];
  const columns: string[] = [];
  for (const row of rows)
    if (row && typeof row === 'object')
      for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  return {
    title: typeof holder?.title === 'string' ? holder.title : title,
    columns,
    rows: rows.map((row) =>
      columns.map((c) => {
        const cell = (row as Record<string, unknown>)[c];
        return typeof cell === 'object' && cell !== null ? JSON.stringify(cell) : (cell as Cell);
      }),
    ),
  };
}
