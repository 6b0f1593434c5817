/**
 * `npm run build`: dist/ afresh from the three programs (tsconfig.build.json: the module; src/client: the
 * browser client with its React hook; src/element: the element, which emits the client's files again, the
 * same bytes). They share no input they write, so they compile side by side: one program a core.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const programs = ['tsconfig.build.json', 'src/client/tsconfig.json', 'src/element/tsconfig.json'];

rmSync('dist', { recursive: true, force: true });
const codes = await Promise.all(
  programs.map(
    (project) =>
      new Promise((resolve) =>
        spawn(process.execPath, [tsc, '-p', project], { stdio: 'inherit' }).on('close', resolve),
      ),
  ),
);
const failed = programs.filter((_, i) => codes[i] !== 0);
if (failed.length > 0) {
  console.error(`build: tsc failed for ${failed.join(', ')}`);
  process.exit(1);
}
