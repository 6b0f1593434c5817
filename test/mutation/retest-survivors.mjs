/**
 * Forgets the survivors (and mutants no test reached) of an incremental mutation file, so that the next run
 * of its row tests them again and keeps every other result:
 *   node test/mutation/retest-survivors.mjs etc/mutation/<row>.json
 * For a change the incremental diff cannot see: the harness itself, or a static mutant (it has no covering
 * tests, so a new test does not re-run it). `-- --force` re-runs the whole row instead.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) throw new Error('usage: node test/mutation/retest-survivors.mjs etc/mutation/<row>.json');
const report = JSON.parse(readFileSync(file, 'utf8'));
let forgotten = 0;
for (const entry of Object.values(report.files)) {
  const kept = entry.mutants.filter((m) => m.status !== 'Survived' && m.status !== 'NoCoverage');
  forgotten += entry.mutants.length - kept.length;
  entry.mutants = kept;
}
writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
console.log(`${file}: ${forgotten} mutants to test again`);
