/**
 * The three documents a newcomer reads stay within their budgets: a new rule replaces the words it makes
 * redundant (no history, no restated rule, no text moved to another page), and a benchmark's new run
 * replaces its row. The caps sit a rule or two above issue 46's cut. Bytes as `wc -c` counts them.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './source-program.js';

const BUDGETS: [file: string, bytes: number][] = [
  ['README.md', 20_000],
  ['docs/ARCHITECTURE.md', 18_000],
  ['bench/README.md', 15_000],
];

describe('documentation budgets', () => {
  it.each(BUDGETS)('%s is at most %d bytes', (file, bytes) => {
    expect(statSync(join(ROOT, file)).size).toBeLessThanOrEqual(bytes);
  });

  it('docs/README.md indexes every page under docs/, and no page that is gone', () => {
    const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
    const listed = [...index.matchAll(/^\| \[[^\]]+\]\(([\w.-]+\.md)\)/gm)].map((m) => m[1]).sort();
    const pages = readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md') && name !== 'README.md')
      .sort();
    expect(listed).toEqual(pages);
  });

  it("keeps the README's test command the one CI runs", () => {
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(ci).toMatch(/^step "test .*"; npm test$/m);
    expect(readme).toMatch(/^npm test {2,}# builds, then runs every suite$/m);
  });
});
