import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Spec files merged to fit the suite's time budget (CONTRIBUTING.md, "The suite's time budget"): a
 * `<name>.merged.spec.ts` imports whole suites, its parts (`<suite>.part.ts`, in its folder), so that jest
 * pays the import of Nest, the module and the sandbox once for all of them. `npm test` runs the merged
 * files; the mutation run (jest.mutation.config.js) runs each part as a file of its own.
 *
 * Throws when a part is imported by no merged file of its folder, or by more than one: a part nothing
 * imports would never run, one imported twice would run twice.
 */
export function mergedParts(root) {
  const files = readdirSync(join(root, 'test'), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split('\\').join('/'));
  const parts = files.filter((path) => path.endsWith('.part.ts'));
  const merged = files.filter((path) => path.endsWith('.merged.spec.ts'));
  const importers = new Map(parts.map((part) => [part, []]));
  for (const file of merged) {
    const folder = file.slice(0, file.lastIndexOf('/') + 1);
    for (const [, name] of readFileSync(join(root, file), 'utf8').matchAll(/^import '\.\/([^']+)\.js';$/gm)) {
      const part = `${folder}${name}.ts`;
      if (!importers.has(part)) throw new Error(`${file} imports ${part}, which is not a part (*.part.ts)`);
      importers.get(part).push(file);
    }
  }
  for (const [part, by] of importers) {
    if (by.length !== 1)
      throw new Error(
        `${part} is imported by ${by.length} merged spec files (${by.join(', ')}): it must be by one`,
      );
  }
  return { parts, merged };
}
