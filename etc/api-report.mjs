/**
 * The API reports of the package's entry points (API Extractor), one etc/<entry>.api.md each.
 * Reads the declarations `npm run api:check` / `api:report` emit into dist-api/ (never dist/, which
 * lint runs before). `--local` rewrites the reports; without it a difference fails the run.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompilerState, Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const local = process.argv.includes('--local');

/** Entry point (package.json `exports`) → its declaration in dist-api/ and its report's name. */
const ENTRIES = [
  { entry: '.', dts: 'index.d.ts', report: 'nestjs-phone-verification' },
  { entry: './testing', dts: 'testing/index.d.ts', report: 'nestjs-phone-verification-testing' },
  { entry: './client', dts: 'client/index.d.ts', report: 'nestjs-phone-verification-client' },
  {
    entry: './client/react',
    dts: 'client/react/index.d.ts',
    report: 'nestjs-phone-verification-client-react',
  },
  { entry: './element', dts: 'element/index.d.ts', report: 'nestjs-phone-verification-element' },
  { entry: './element/react', dts: 'element/react.d.ts', report: 'nestjs-phone-verification-element-react' },
];

function configFor({ dts, report }) {
  return {
    projectFolder: root,
    mainEntryPointFilePath: join(root, 'dist-api', dts),
    newlineKind: 'lf',
    compiler: {
      overrideTsconfig: {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          // One program reads all the entries: the server's need Node's types, the browser client's the DOM.
          lib: ['ES2023', 'DOM'],
          types: ['node'],
          strict: true,
        },
        files: [join(root, 'dist-api', dts)],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: report,
      reportFolder: join(root, 'etc'),
      reportTempFolder: join(root, 'dist-api', 'report'),
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      // Doc comments are written for readers, not for TSDoc's grammar.
      tsdocMessageReporting: { default: { logLevel: 'none' } },
      extractorMessageReporting: {
        default: { logLevel: 'warning' },
        // No release tags (@public, @beta): everything an entry exports is public.
        'ae-missing-release-tag': { logLevel: 'none' },
        // A type a public signature names but the entry does not export fails lint: export it
        // deliberately (in the entry's index.ts, by audience) or keep it off the public surface (a
        // constructor the module calls is `/** @internal */`, which tsconfig's stripInternal drops).
        'ae-forgotten-export': { logLevel: 'error', addToApiReportFile: false },
        'ae-undocumented': { logLevel: 'none' },
      },
    },
  };
}

const configs = ENTRIES.map((spec) =>
  ExtractorConfig.prepare({
    configObject: configFor(spec),
    configObjectFullPath: join(root, 'etc', 'api-report.json'),
    packageJsonFullPath: join(root, 'package.json'),
  }),
);
// One TypeScript program for all the analyses (building it is most of the time).
const compilerState = CompilerState.create(configs[0], {
  additionalEntryPoints: configs.slice(1).map((config) => config.mainEntryPointFilePath),
});

let failed = false;
for (const [i, spec] of ENTRIES.entries()) {
  const result = Extractor.invoke(configs[i], {
    localBuild: local,
    compilerState,
    showVerboseMessages: false,
  });
  if (!result.succeeded) {
    failed = true;
    console.error(
      result.errorCount > 0
        ? `api: "${spec.entry}" has ${result.errorCount} errors above (a forgotten export: a type its public` +
            ' signatures name that it does not export)'
        : result.apiReportChanged
          ? `api: the public surface of "${spec.entry}" differs from etc/${spec.report}.api.md;` +
            ' if the change is meant, run `npm run api:report` and commit the report'
          : `api: API Extractor failed on "${spec.entry}" (${result.errorCount} errors, ${result.warningCount} warnings)`,
    );
  }
}
process.exitCode = failed ? 1 : 0;
