/**
 * The docs checks that read the code through one TypeScript program over `src/` (source-program.ts): the
 * code names the docs cite, the options reference, and the option fields the option rules know.
 *
 * Whole suites (the parts below), merged into one spec file so that the program, about 20 s of CPU, is built
 * once for both (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/docs/<part>.part.ts'`.
 */
import './code-names.part.js';
import './option-rules-known.part.js';
import './options-reference.part.js';
