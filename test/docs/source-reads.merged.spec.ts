/**
 * The docs checks: those that read the code through one TypeScript program over `src/` (source-program.ts:
 * the code names the docs cite, the options reference, the option fields the option rules know), the README's
 * snippets compiled, the figures the docs cite against the bench and the constants, and the docs' sizes.
 *
 * Whole suites (the parts below), merged into one spec file so that the program, about 20 s of CPU, and
 * TypeScript itself are loaded once for all (CONTRIBUTING.md, "The suite's time"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/docs/<part>.part.ts'`.
 */
import './bench-figures.part.js';
import './code-names.part.js';
import './constant-figures.part.js';
import './doc-budgets.part.js';
import './option-rules-known.part.js';
import './options-reference.part.js';
import './snippets.part.js';
