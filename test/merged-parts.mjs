import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Spec files merged to fit the suite's time budget (CONTRIBUTING.md, "The suite's time budget"): a
 * `<name>.merged.spec.ts` imports whole suites, its parts, so that jest pays a file's start and the import
 * of what its parts share once for all of them. In `test/`, a part is a `<suite>.part.ts` of the merged
 * file's folder, imported by exactly one merged file. In `src/`, a part is a unit spec (`<file>.spec.ts`,
 * beside the file it tests) imported by the merged file of its folder; a unit spec no merged file imports
 * runs alone. `npm test` runs the merged files (and ignores the unit specs they import); the mutation run
 * (jest.mutation.config.js) runs each part as a file of its own.
 *
 * Throws when a `.part.ts` is imported by no merged file of its folder, or when a part is imported by more
 * than one: a part nothing imports would never run, one imported twice would run twice.
 */
export function mergedParts(root) {
  const files = ['test', 'src']
    .filter((dir) => existsSync(join(root, dir)))
    .flatMap((dir) => readdirSync(join(root, dir), { withFileTypes: true, recursive: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split('\\').join('/'));
  const merged = files.filter((path) => path.endsWith('.merged.spec.ts'));
  const unitSpec = (path) => path.startsWith('src/') && path.endsWith('.spec.ts') && !merged.includes(path);
  const importers = new Map(files.filter((path) => path.endsWith('.part.ts')).map((part) => [part, []]));
  for (const file of merged) {
    const folder = file.slice(0, file.lastIndexOf('/') + 1);
    for (const [, name] of readFileSync(join(root, file), 'utf8').matchAll(/^import '\.\/([^']+)\.js';$/gm)) {
      const part = `${folder}${name}.ts`;
      if (unitSpec(part) && files.includes(part) && !importers.has(part)) importers.set(part, []);
      if (!importers.has(part))
        throw new Error(`${file} imports ${part}, which is not a part (*.part.ts, or a unit spec in src/)`);
      importers.get(part).push(file);
    }
  }
  for (const [part, by] of importers) {
    if (by.length !== 1)
      throw new Error(
        `${part} is imported by ${by.length} merged spec files (${by.join(', ')}): it must be by one`,
      );
  }
  return { parts: [...importers.keys()], merged };
}
