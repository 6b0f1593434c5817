/**
 * Every measured figure in the README and docs/ names the bench row it comes from, as
 * `[bench: <section> › <row>]` (or `[bench: <section>]` for a section without a table), and says what
 * that row says: the section is a `## <section>:` heading of bench/README.md, the row a line of its table
 * whose first cell is `<row>`, and the number nearest before the citation is one of that row's figures. A
 * figure of a measured kind (µs, ns, req/s, heap, allocations, bytes per session or stream, p99, events a
 * second, upstream GETs, a ratio to the minimal proxy) with no citation is refused: a number no bench reads
 * goes stale unseen.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './source-program.js';

const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)].filter((p) =>
  p.endsWith('.md'),
);
const BENCH = readFileSync(join(ROOT, 'bench/README.md'), 'utf8');
const CITATION = /\[bench:\s+([a-z-]+)(?:\s+›\s+([^\]]+))?\]/g;
/** Figures of the kinds only a measurement gives: times, rates, memory, upstream calls, ratios to the proxy. */
const MEASURED =
  /\d[\d,.]*\s?(?:µs|ns\b|req\/s|[KM]?B of heap|[KM]?B allocated|[KM]?B per (?:session|stream|answer)|ms at p99|ms p99|events a second|upstream GETs?|GETs? per session|of a minimal [\w ]*proxy)/g;
/** How far before a citation its figure may stand (one clause). */
const REACH = 160;

/** The text of a bench section: from its heading to the next. */
function section(name: string): string | undefined {
  const start = BENCH.search(new RegExp(`^## ${name}:`, 'm'));
  if (start < 0) return undefined;
  const rest = BENCH.slice(start + 3);
  const end = rest.search(/^## /m);
  return end < 0 ? rest : rest.slice(0, end);
}

function row(text: string, first: string): string | undefined {
  return text.split('\n').find((line) => line.startsWith('|') && line.split('|')[1]?.trim() === first);
}

/** The numbers of a text as written (`p99` is a name, not a figure); a goal's cell (≥, ≤) holds none. */
const numbers = (text: string): string[] =>
  [...text.replace(/\|\s*[≥≤][^|]*/g, '|').matchAll(/(?<![\w.])\d[\d,]*(?:\.\d+)?/g)].map((m) =>
    m[0].replace(/,/g, ''),
  );

describe('figures in the docs name their bench row', () => {
  it.each(PAGES)('%s: each citation names a bench section and row that hold its figure', (page) => {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const match of text.matchAll(CITATION)) {
      const [citation, name, first] = match;
      const body = section(name!);
      expect({ citation, section: body === undefined ? 'missing' : 'found' }).toEqual({
        citation,
        section: 'found',
      });
      const line = first === undefined ? body! : row(body!, first.replace(/\s+/g, ' '));
      expect({ citation, row: line === undefined ? 'missing' : 'found' }).toEqual({ citation, row: 'found' });
      const before = text
        .slice(Math.max(0, match.index - REACH), match.index)
        .split(/\]|\.\s/)
        .pop()!;
      // The figure is the number nearest the citation.
      const figure = numbers(before).pop();
      const held = new Set(numbers(line!));
      expect({ citation, figure: figure !== undefined && held.has(figure) ? 'held' : figure }).toEqual({
        citation,
        figure: 'held',
      });
    }
  });

  it.each(PAGES)('%s: no measured figure without a citation', (page) => {
    const text = readFileSync(join(ROOT, page), 'utf8');
    const cites = new RegExp(CITATION.source);
    const uncited = [...text.matchAll(MEASURED)]
      .filter((m) => !cites.test(text.slice(m.index, m.index + REACH)))
      .map((m) => m[0]);
    expect(uncited).toEqual([]);
  });
});
