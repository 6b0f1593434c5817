/**
 * `npm run lint:package`: packs the package as a release would (`npm pack`, whose `prepack` builds it), then
 * lints the tarball with publint (--strict: warnings fail too) and Are the Types Wrong. One tarball for both.
 *
 * attw's `cjs-resolves-to-esm` is accepted: under TypeScript's `node16` CommonJS resolution an ES-module-only
 * package "can only be imported with a dynamic import()". NestJS 12 itself is ESM-only and reports the same;
 * Node 20.19+ loads it with require(esm), which CommonJS hosts use for Nest and for this package alike
 * (README, "Install"; test/package/ boots a CommonJS host).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const out = mkdtempSync(join(tmpdir(), 'pv-pack-'));
try {
  const [{ filename }] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', out], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const tarball = join(out, filename);
  execFileSync(bin('publint'), ['run', tarball, '--strict'], { stdio: 'inherit' });
  execFileSync(bin('attw'), [tarball, '--ignore-rules', 'cjs-resolves-to-esm', '--format', 'table-flipped'], {
    stdio: 'inherit',
  });
} catch (error) {
  process.exitCode = 1;
  if (typeof error?.status !== 'number') throw error;
} finally {
  rmSync(out, { recursive: true, force: true });
}
