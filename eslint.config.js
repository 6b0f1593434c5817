import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import boundaries from 'eslint-plugin-boundaries';

/**
 * The layers of src/, lowest first (docs/ARCHITECTURE.md, "Layout"). A file may import its own folder
 * and any folder of a lower layer, never one of its own layer or above: the dependencies point one way.
 */
const LAYERS = [
  ['core'], // pure rules: methods, statuses, the session record, events, errors, money, hashing
  ['api', 'store'], // the two ports to the outside: the verification API and the shared store
  ['options'], // public option types, defaults, rules, the resolver
  ['observability'], // logger, redaction, metrics, telemetry (they read the resolved options)
  ['ledger'], // expected charges per day, method and operator prefix, reconciled with usage and balance
  ['account', 'history'], // prices, balance, methods offered, health: what the account may do; per-number history
  ['sessions'], // the session record's life: tracker, refresher, repository, reconciler
  ['pumping'], // the pumping defence: counts per range, prefix, country and caller, holds, givers' shares
  ['protection', 'test-numbers'], // limits, cooldowns, spend cap, coalescing (asks pumping); reviewer numbers
  ['verification'], // the service frontends and hosts call: start, check, status, handles, phone policy
  ['http', 'guard'], // client routes (and the problem filter, OpenAPI), the verified-phone guard
  ['webhooks'], // the webhook route (answers through http's problem filter)
  ['ops'], // the ops page a host mounts behind its own guard
  ['module'], // VerificationModule: wires everything
];
const layerPolicies = LAYERS.flatMap((layer, rank) =>
  layer.map((type) => ({
    from: { element: { type } },
    allow: { to: { element: { types: { anyOf: [type, ...LAYERS.slice(0, rank).flat()] } } } },
  })),
);

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-*/**',
      'node_modules/**',
      'coverage/**',
      'sample-app/dist/**',
      'sample-app/public/**',
      'test-output/**',
      'bench/dist/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        AbortController: 'readonly',
        fetch: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      // Ambient namespaces emit no code and are the only way to augment a library's (React's JSX.IntrinsicElements
      // for the element's tag); namespaces that would run stay forbidden.
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    files: ['src/**/*.ts'],
    // src/index.ts stands above every layer: it names what the package exports.
    ignores: ['src/**/*.spec.ts', 'src/index.ts'],
    plugins: { boundaries },
    settings: {
      'import/resolver': { typescript: { project: './tsconfig.json' } },
      'boundaries/elements': [
        ...LAYERS.flat().map((type) => ({ type, pattern: `src/${type}` })),
        // The sandbox and the browser client are entry points of their own: they stand beside the layers.
        { type: 'testing', pattern: 'src/testing' },
        { type: 'client', pattern: 'src/client' },
        { type: 'element', pattern: 'src/element' },
      ],
    },
    rules: {
      // Every file of src/ belongs to a layer (or to the sandbox or the browser client).
      'boundaries/no-unknown-files': 'error',
      'boundaries/dependencies': [
        'error',
        {
          default: 'disallow',
          message:
            'layers point one way: {{from.type}} may not import {{to.type}} (eslint.config.js, LAYERS)',
          policies: [
            ...layerPolicies,
            {
              from: { element: { type: 'testing' } },
              allow: { to: { element: { types: { anyOf: ['testing', 'core', 'api'] } } } },
            },
            { from: { element: { type: 'client' } }, allow: { to: { element: { type: 'client' } } } },
            // The custom element is built on the browser client's public entry only.
            {
              from: { element: { type: 'element' } },
              allow: { to: { element: { types: { anyOf: ['element', 'client'] } } } },
            },
          ],
        },
      ],
    },
  },
  {
    // A file has one role: none in src/ (specs included) over 350 lines; a class takes at most 8
    // dependencies (a 9th says it holds two roles: split it by role) (issue 31).
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 350, skipBlankLines: false, skipComments: false }],
      'max-params': ['error', 8],
    },
  },
  {
    files: ['test/**', 'bench/**', 'sample-app/**', 'src/testing/cli.ts', '.ci/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // jest reads `toHaveProperty('a.b')` as the path a → b: `not.toHaveProperty('verification.test')`
    // passed whatever the span held. A key with a dot is given as `['a.b']`.
    files: ['test/**/*.ts', 'src/**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='toHaveProperty'][arguments.0.value=/\\./]",
          message: "toHaveProperty('a.b') reads the path a → b; give a key with a dot as ['a.b'].",
        },
      ],
    },
  },
  {
    // CommonJS where the loader requires it: the mutation run's jest runner and test environment, which
    // Stryker loads with require().
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
