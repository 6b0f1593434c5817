/**
 * Jest for the mutation run (`npm run test:mutation`, stryker.config.js). Every spec whose behaviour a mutant
 * of `src/` can change, unit specs and the in-process e2e suites alike (a host over real HTTP against the
 * sandbox, Redis at `REDIS_URL` or a throwaway one from the global setup). Left out, because a mutant of
 * `src/` cannot reach them or they only repeat what others cover at many times the cost:
 * - the pages driven in Chromium (the element's and client's logic has specs that run without a browser);
 * - the package suites, which install the built `dist/` (a mutant lives in `src/`);
 * - the docs checks (they read files, not behaviour) and the soak (a minute of traffic).
 * Stryker runs, for each mutant, only the tests that reached it in the first run (coverageAnalysis: perTest),
 * and the covering-files sequencer loads only the spec files holding them.
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import base from './jest.config.js';
import { mergedParts } from './test/merged-parts.mjs';

const root = import.meta.dirname;

export const OUT_OF_REACH =
  /^test\/(package|docs)\/|^test\/hardening\/soak\.spec\.ts$|^test\/(client\/browser-client|element\/(phone-verification|no-bundler))\.e2e\.spec\.ts$|^test\/sample-app\/(verify-by-each-method|waits-and-failures)\.spec\.ts$/;

function specsUnder(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.spec.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split('\\').join('/'));
}

// A merged spec file (test/merged-parts.mjs) runs here as its parts, each a file of its own: a mutant's run
// loads only the parts holding a test that reached it, as it did before the merge.
const { parts, merged } = mergedParts(root);

export const mutationSpecs = [...new Set([...specsUnder('src'), ...specsUnder('test'), ...parts])]
  .filter((path) => !merged.includes(path))
  .filter((path) => !OUT_OF_REACH.test(path))
  .sort();

/**
 * Where each folder's behaviour is tested: `MUTATE_FOLDER=<folder>` (stryker.config.js) runs that folder's
 * mutants against these specs alone (its unit specs beside it in `src/`, then the suites of its feature).
 * With every spec in reach, a module that every host imports is related to most of the suite: the first run
 * of one folder is most of the suite. Per folder, the first run of guard's 42 tests took 83 s on a loaded
 * 2-core machine, and a mutant the few spec files that reached it.
 */
export const SPECS_BY_FOLDER = {
  account: [
    /^src\/account\//,
    /^test\/operations\/(account|balance-watch|method-stats)\./,
    /^test\/journeys\/learn/,
  ],
  api: [/^src\/api\//, /^test\/api-client\//],
  // The client's specs run in Node over a fake transport and fake timers (no Chromium: browser-client.e2e is
  // out of reach); bundle-size measures the bundle esbuild makes, not behaviour. client-headers: the host's
  // headers, an object or a function, on each call and the stream.
  client: [
    /^test\/client\/(client-answers|client-clock|client-headers|client-waits|verification-client|verification-journey|follow-twins|fetch-event-source|safe-links|storage-choice|stream-answered-html|stream-chunk-missing)\./,
  ],
  // Its unit specs, and the one table that checks what a user is handed to open or call (user-links.ts) beside
  // the browser client's check.
  core: [/^src\/core\//, /^test\/client\/safe-links\./],
  // Without a browser: the element's wiring of the client, its texts, messages and QR encoder (the Chromium
  // suites, phone-verification.e2e and no-bundler.e2e, are out of reach; bundle-size is not behaviour).
  element: [/^test\/element\/(element-client|element-texts|element-focus|task-view|messages|qr)\./],
  guard: [
    /^src\/guard\//,
    /^test\/verified-phone\//,
    /^test\/sessions\/verified-phone\./,
    /^test\/phone-change\//,
    /^test\/purposes\//,
    /^test\/attacks\/(guard|phone-change)-/,
  ],
  // assess-start: a refusal's assessment kept on its entry.
  history: [
    /^src\/history\//,
    /^test\/history\//,
    /^test\/attacks\/history-/,
    /^test\/purposes\/assess-start\./,
  ],
  ledger: [/^src\/ledger\//, /^test\/ledger\//],
  // Its unit specs beside the files too (SseResponse's backlog bound, literalPrefix); the browser key
  // cookie's scope and when it is set (coalescing, the cookie-path attacks), what a switch reads of it
  // (the cooldown's exact timing), and whose meter the status route's reads take (one address's polls);
  // the cancel route's journeys.
  http: [
    /^src\/http\//,
    /^test\/client-routes\//,
    /^test\/status-stream\//,
    /^test\/journeys\/cancel[.-]/,
    /^test\/protection\/(coalescing|cooldown-and-check)\./,
    /^test\/attacks\/(cookie-path-|api-rate-status-polls)/,
  ],
  module: [
    /^src\/module\//,
    /^test\/registration\//,
    /^test\/operations\/(options|unknown-options|optional-peers|health)\./,
    // The boot's log of the served URLs under a global prefix, and its raw-body warning.
    /^test\/client-routes\/global-prefix\./,
    /^test\/webhooks\/content-types\./,
  ],
  observability: [/^src\/observability\//, /^test\/tracing\//, /^test\/operations\/(logs|metrics)\./],
  ops: [/^src\/ops\//, /^test\/ops\//],
  options: [
    /^src\/options\//,
    /^test\/operations\/(options|unknown-options)\./,
    /^test\/protection\/limit-options\./,
  ],
  protection: [/^src\/protection\//, /^test\/protection\//],
  pumping: [/^src\/pumping\//, /^test\/protection\/pumping-/],
  sessions: [/^src\/sessions\//, /^test\/sessions\//],
  store: [/^test\/store\//, /^test\/privacy\/store-dump\./, /^test\/multi-instance\/store-outage\./],
  'test-numbers': [/^src\/test-numbers\//, /^test\/test-numbers\//, /^test\/attacks\/test-numbers-/],
  verification: [/^src\/verification\//, /^test\/journeys\//, /^test\/events\//, /^test\/reconciler\//],
  // The route's dedupe by webhook-id is tested in test/webhooks (replays, the lease, the id's bounds);
  // test/multi-instance/webhook-dedupe.e2e (every outcome of every method on three instances) is the store's
  // and the tracker's exactly-once, at many times the cost of a mutant's run.
  webhooks: [/^src\/webhooks\//, /^test\/webhooks\//],
};

// src/verification/paid-start.ts's scope (SPECS_BY_SCOPE['paid-start']), which flow-outcomes' widens.
const PAID_START = [
  /^test\/client-routes\/(errors|start-expiry|start-upstream-answers)\./,
  /^test\/protection\/refused-starts\./,
  /^test\/privacy\/erasure-(callers|refused-start-slot|in-flight)\./,
  /^test\/attacks\/(erasure-start-in-flight|coalescing-claim-admission-reads)\./,
  /^test\/history\/(history|history-refusal-budget|start-outcomes)\./,
  /^test\/purposes\/assess-start\./,
  /^test\/operations\/logs\./,
  /^test\/tracing\/tracing\.e2e\./,
  // A test number's session played by the module for the owners the table names, a stranger's start of it
  // paid for as a real number's (plays, play), and counted for its starter, owner or network (play's starter:
  // spare-slots, wrong-code-budgets).
  /^test\/test-numbers\/(test-numbers|test-numbers-strangers|test-numbers-spare-slots|test-numbers-wrong-code-budgets)\.e2e\./,
];

/**
 * Where a few files of a folder are tested, when the folder's whole list makes the first run too long for
 * them: `MUTATE_SPECS=<name>` with `MUTATE_FOLDER=<its folder>` and `-- --mutate <its files>` runs their
 * mutants against these specs instead of the folder's (a file's behaviour may be tested outside its folder's
 * suites). The folder's list stays as it is for a run of the whole folder.
 */
export const SPECS_BY_SCOPE = {
  // src/module (all of it): each registration shape booted in its own test (forRoot, forRootAsync's three,
  // named; a named registration's store as a URL, the host's client, a ready store, a prefix the host
  // chose: named-store-shapes, shared-store-own-state), without the suites that boot a host in beforeAll or
  // spawn a process (every module mutant reaches those: a survivor ran 114 tests, 7 minutes on the machine).
  // src/webhooks/webhook-receiver.ts: the route's answers, bounds and log lines (webhook-answers, webhook-route,
  // webhook-unsigned: hosts booted once per suite), a host's own verifier and the raw body a host lacks
  // (webhook-options and content-types, a host per test: a mutant runs only the tests that reached it), and
  // the webhook's span (tracing). So are webhook-notices.ts, webhook-notice.ts and webhook.controller.ts (what a
  // delivered notice means for its session, the body's shape, the 200 answer), `--ignoreStatic`.
  'webhook-answers': {
    folder: 'webhooks',
    specs: [
      /^src\/webhooks\//,
      /^test\/webhooks\/(webhook-answers|webhook-route|webhook-unsigned|webhook-options|webhook-notices|content-types)\./,
      /^test\/tracing\/tracing\.e2e\./,
      // webhook.controller.ts's `webhooks.decorators`: applied to the controller, and one that throws.
      /^test\/registration\/webhook-decorators-shapes\./,
    ],
  },
  // src/webhooks/webhook-verifier.ts and raw-body-probe.ts run at a host's boot: the verifier chosen (a host's
  // own, several secrets, `signature: 'none'` and its warning) and the raw-body warning at boot, on Express and
  // Fastify, in the suites that boot a host per test (webhook-options, content-types), so that a mutant runs
  // only the tests whose host it reached. The suites booting in beforeAll would make every one of them static.
  'webhook-boot': {
    folder: 'webhooks',
    specs: [/^test\/webhooks\/(webhook-options|content-types)\./],
  },
  // src/webhooks/standard-webhooks.verifier.ts: the signature and timestamp check, against its spec (which
  // compares it with the standardwebhooks package); the route's own refusals are webhook-answers'.
  'webhook-signatures': {
    folder: 'webhooks',
    specs: [/^src\/webhooks\/standard-webhooks\.verifier\.spec\./],
  },
  // src/api/retry-policy.ts and the client's call and retry rule (verification-api.client.ts, `#call` and
  // `#retryWait`): which failures a GET retries and how long it waits, a POST never repeated once it may
  // have reached the API, each attempt reported. The other api-client suites (operations, errors, the
  // transport) reach every line of the call at many times the cost.
  'api-retry': {
    folder: 'api',
    specs: [/^src\/api\/retry-policy\.spec\./, /^test\/api-client\/(retry-bounds|faults)\./],
  },
  // src/api's transports (http-transport.ts, axios-transport.ts, undici-transport.ts): the exchange over a local
  // server on both transports (transport: the request sent, keep-alive, the body cap, no redirect, the deadline,
  // broken answers), a long answer's text (answer-text), the axios instance kept apart (transport-isolation) and
  // undici's clocks (transport-timers), with src/api's unit specs. Left out: close-over-https, whose client runs
  // dist/ in a child process (out of a mutant's reach, and Stryker's sandbox has no dist/); the folder's other
  // suites reach every transport line through each call, at many times the cost.
  'api-transports': {
    folder: 'api',
    specs: [
      /^src\/api\/[^/]+\.spec\./,
      /^test\/api-client\/(transport|answer-text|transport-isolation|transport-timers)\./,
    ],
  },
  // src/http's problem responses and the body routes' rules: the problem filter (status,
  // application/problem+json, error_code, Cache-Control, Retry-After), the body guard (cross-site, media type,
  // size at its bound) and the validation pipe (each field and why), on Express and Fastify (errors,
  // body-rules: hosts booted once per suite). With status-stream and global-prefix too, a first pass on the
  // shared machine (load 26) tested 120 of 267 mutants in 34 minutes and was stopped.
  'http-problems': {
    folder: 'http',
    specs: [/^src\/http\//, /^test\/client-routes\/(errors|body-rules|host-boundary)\./],
  },
  // src/observability's spans and the upstream observer: a refusal against an upstream outage in spans and
  // metrics, the span's attributes (never a phone number), each booted in its own test (test/tracing). Left
  // out: metrics.e2e and logs.e2e run their flow in beforeAll, which makes every mutant they reach static (a
  // first run counted 92 of 103: every test for each).
  'observability-spans': {
    folder: 'observability',
    specs: [/^src\/observability\//, /^test\/tracing\//],
  },
  // src/observability's log lines: the redaction of every line (phone numbers masked, ids shortened, secrets
  // removed) and which lines are written, against their unit specs.
  'observability-logs': {
    folder: 'observability',
    specs: [/^src\/observability\//],
  },
  registration: {
    folder: 'module',
    specs: [
      /^src\/module\//,
      /^test\/registration\/(verification-module\.registration|registration-shapes|named-registrations|named-store-shapes|shared-store-own-state)\./,
      // Two registrations on one keyPrefix the host chose: each keeps its own state apart.
      /^test\/attacks\/registrations-shared-prefix-reconcile\./,
    ],
  },
  // src/sessions/verification.tracker.ts and session-record.repository.ts: the tracker's merges, emissions and
  // claims and the records' reads and writes, on a MemoryStore and a fixed clock (test/sessions boots and
  // restarts hosts per test: every tracker mutant reaches it, minutes a survivor on the shared machine).
  // src/sessions/session-refresher.ts and reconcile-queue.ts: their unit specs (the coalescing, the meter, the
  // status cache off, rebuilt records, the schedule at its bounds), the reconciler's pace (test/reconciler) and
  // restarts (test/sessions). The routes' and attacks' suites also reach them, at hours a run.
  refresher: {
    folder: 'sessions',
    specs: [/^src\/sessions\//, /^test\/sessions\//, /^test\/reconciler\//],
  },
  'session-records': {
    folder: 'sessions',
    specs: [/^src\/sessions\//],
  },
  // src/sessions/verification.reconciler.ts: its pace, lifecycle and instances (test/reconciler) and the
  // canceled journeys it follows, its span (test/tracing); src/sessions/subject-index.ts: what an erasure finds and leaves
  // (test/privacy, the erasure attacks) and a number leaving an account (test/phone-change).
  reconciler: {
    folder: 'sessions',
    specs: [
      /^src\/sessions\//,
      /^test\/reconciler\//,
      /^test\/journeys\/cancel[.-]/,
      /^test\/tracing\/tracing\.e2e\./,
    ],
  },
  'subject-index': {
    folder: 'sessions',
    specs: [
      /^src\/sessions\/subject-index\.spec\./,
      /^test\/privacy\//,
      /^test\/phone-change\//,
      /^test\/attacks\/erasure-/,
    ],
  },
  // src/store's MemoryStore, its due-queue and slab, and the batch primitive: the store contract over Memory,
  // Redis and Redis Cluster, and the MemoryStore's bounds (test/store). The folder's two e2e suites boot hosts
  // over Redis (store-outage stops it: under load its first run failed, a 503 at start).
  'store-contract': {
    folder: 'store',
    specs: [/^test\/store\//],
  },
  // src/store's small parts (write-order.ts, stored-keys.ts, store-arguments.ts, registration-scoped-store.ts):
  // their unit specs, the store contract over every store, and the store dumps that read keys back.
  'store-parts': {
    folder: 'store',
    specs: [/^src\/store\/write-order\./, /^test\/store\//, /^test\/privacy\/store-dump\./],
  },
  // How a registration's store is made and opened (create-store.ts, open-redis-client.ts, local-channels.ts): their
  // unit specs and the store suites, which open every shape (a URL, a host's client, a ready store).
  'store-open': {
    folder: 'store',
    specs: [/^src\/store\/(local-channels|open-redis-client)\./, /^test\/store\//],
  },
  // src/store/redis-connection.ts and redis-command-runner.ts: every RedisStore operation goes through them, so
  // a survivor of 'store-contract' ran each test of test/store that reached it, restarts, fail-overs and
  // back-offs included (18 of 233 mutants tested in 10 minutes). Here the specs that reach them without
  // waiting: the unit specs over both libraries' stand-ins on jest's clock (a host's client and the store's
  // own: redis-connection, redis-connection.owned; the subscriber's; a library missing: the drivers spec),
  // the stand-in clients' failures (redis-store-failures), and the parts of test/store with no cluster,
  // back-off or long outage (redis.store's outages of a throwaway Redis last about a second each).
  'store-connection': {
    folder: 'store',
    specs: [
      /^src\/store\/(redis-connection(\.owned)?|redis-subscriber(\.check)?|open-redis-client(\.drivers)?|store-claim\.table)\.spec\./,
      /^test\/store\/(redis-store-failures|redis\.store|create-store|registration-scoped-store|redis-driver-choice|redis-refused-groups|redis-subscriber-channels|redis-subscriber-lazy-client\.attack)\./,
    ],
  },
  // src/store/store-claim.ts: its unit specs (the claim over Memory, Redis and a host's store; the race table) and
  // the emission's kept claim under a slow listener (the tracker's spec on jest's clock).
  'store-claim': {
    folder: 'store',
    specs: [/^src\/store\/store-(claim|replace)/, /^src\/sessions\/verification\.tracker\.slow-listener\./],
  },
  // src/store's pub/sub subscriber (redis-subscriber.ts, redis-subscriber-link.ts): its unit spec over both drivers'
  // stand-ins on jest's clock, the store contract and the subscriber's own suites over Redis and Redis Cluster
  // (test/store), the status stream that listens on it (test/status-stream), and the multi-instance suites that
  // stop Redis or a subscriber under hosts.
  'store-subscriber': {
    folder: 'store',
    specs: [
      /^src\/store\/redis-subscriber\.(check\.)?spec\./,
      /^test\/store\//,
      /^test\/status-stream\//,
      /^test\/multi-instance\/(subscriber-recovery|status-stream|store-outage)\./,
    ],
  },
  // src/account's figures and health (first-method.ts, operator-figures.ts, method-health.ts,
  // method-health.service.ts, price-book.ts): their unit specs beside them, on a MemoryStore and a fixed clock
  // (the operations suites boot a host per test: every figure mutant reaches them).
  'account-figures': {
    folder: 'account',
    specs: [/^src\/account\//],
  },
  // src/verification's choosers (first-method.chooser.ts, orchestration.policy.ts, fallback-timing.ts): their
  // unit specs beside them (test/journeys boots a host per test).
  'verification-choosers': {
    folder: 'verification',
    specs: [/^src\/verification\//],
  },
  // src/verification/check-refusal.ts and upstream-error.mapper.ts: the refusal a check, start or switch answers
  // for what the API did not accept, against their unit specs (the truth asked of the API, the expiry and the
  // Retry-After at their bounds); test/client-routes/errors.e2e reaches them through two booted hosts.
  refusals: {
    folder: 'verification',
    specs: [/^src\/verification\/(check-refusal|upstream-error\.mapper)\.spec\./],
  },
  // src/verification/check.flow.ts and switch.flow.ts (a check; a switch and a cancel): what a caller sees of a
  // check (the wrong-code budgets and their give-back, the check limit before the journey, the resend
  // cooldown after a switch, a check at the expiry: test/protection, test/client-routes) and of the journey's
  // moves (the switch's answers, refusals and limits, the routes' guards, cancel with and without webhooks, a
  // switched journey's lifetime and ends: test/journeys), hosts booted per test but for a few suites' one
  // host. Left out: the routes' and the attacks' suites, which reach both flows at many times the cost.
  'check-switch': {
    folder: 'verification',
    specs: [
      /^test\/protection\/(cooldown-and-check|wrong-codes|wrong-code-give-back|check-limit-first)\./,
      /^test\/client-routes\/(check-at-expiry|verified-at-clock|errors|operator-fallback-code-length)\./,
      /^test\/journeys\/(switch|route-rules|cancel|cancel-without-webhooks|switch-lifetime|journey-ends)\./,
      // Two instances switching one journey at once (the step's claim), the hook's switchedFrom and the
      // methods a suspected switch is offered, a test number's check and switch, each flow's span, log line
      // and history entry, and a check answered after its number was erased.
      /^test\/journeys\/multi-instance-switch\./,
      /^test\/protection\/(before-start|spend-cap-journeys)\./,
      /^test\/test-numbers\/test-numbers\.e2e\./,
      /^test\/tracing\/tracing\.e2e\./,
      /^test\/operations\/logs\./,
      /^test\/history\/history\.e2e\./,
      /^test\/privacy\/erasure-in-flight\./,
    ],
  },
  // src/verification's start side (start.flow.ts, paid-start.ts, in-doubt-starts.ts, flow-outcomes.ts,
  // verification-erasure.ts): what a caller sees of a start (its refusals and answers, `auto` and the device
  // hint, a graded answer taken, the caller's pending session handed back, a test number played: test/client-routes,
  // test/journeys, test/protection, test/test-numbers, test/purposes), a start in doubt adopted by its webhook
  // (test/events, test/multi-instance), an erasure and a start it meets in flight (test/privacy, the erasure
  // attacks), and each start's span, log line and history entry. Left out: the suites of the switch, the
  // status, the webhooks, the reconciler and the limits, which start sessions too (every start mutant reaches
  // them, at many times the cost). Its dry run: 232 tests, 4 minutes on the loaded machine; the five files are
  // 515 mutants, hours on two shared cores (the in-doubt suites wait on real time-outs): run the five with
  // the one incremental file, so that each run keeps what an earlier one measured.
  'start-flows': {
    folder: 'verification',
    specs: [
      /^test\/client-routes\/(errors|happy-paths|start-expiry|spec-gaps)\./,
      /^test\/journeys\/(auto-start|auto-operator)\./,
      /^test\/protection\/(coalescing|before-start|graded-answers|graded-shapes|refused-starts|store-round-trips)\./,
      /^test\/privacy\/erasure/,
      /^test\/events\/in-doubt-/,
      /^test\/attacks\/erasure-(start-in-flight|record-lands-before-mark|in-doubt-adopted-during|purpose-claim-outlives-mark|drops-phone-change-revocation)\./,
      /^test\/multi-instance\/(in-doubt-adoption|start-last-trip)\./,
      /^test\/test-numbers\/test-numbers\.e2e\./,
      /^test\/purposes\/(purposes|purpose-erasure)\./,
      /^test\/tracing\/tracing\.e2e\./,
      /^test\/operations\/logs\./,
      /^test\/history\/history\.e2e\./,
    ],
  },
  // src/verification/in-doubt-starts.ts alone: a start in doubt remembered, its window, its one session and
  // its adoption by a webhook (test/events, test/multi-instance), and the erasures that meet one. Every mutant
  // of the file runs only these (start-path's other suites never reach it but in its dry run).
  'in-doubt': {
    folder: 'verification',
    specs: [
      /^test\/events\/in-doubt-/,
      /^test\/multi-instance\/in-doubt-adoption\./,
      /^test\/privacy\/erasure-in-doubt\./,
      /^test\/attacks\/(erasure-)?in-doubt-/,
    ],
  },
  // src/verification's answers to a caller (client-refusals.ts, journey-handles.ts, start-view.ts,
  // phone-number.policy.ts): the refusals field for field and the bodies the routes take (errors, body-rules,
  // spec-gaps, methods, owner-null), a start's answer (happy-paths), a handle and a journey token opened for
  // its owner alone, put back after a restart and carried by twins (test/sessions' journey suites), a switch's
  // refusals (switch, route-rules).
  'client-answers': {
    folder: 'verification',
    specs: [
      /^test\/client-routes\/(errors|body-rules|spec-gaps|methods|owner-null|happy-paths)\./,
      /^test\/sessions\/(journey-token-twins|journey-restart|journey-owner|journey-token-lease)\./,
      /^test\/journeys\/(switch|route-rules)\.e2e\./,
      // A purpose the host does not accept, or one its methods exclude (purpose_not_allowed, methods per purpose).
      /^test\/purposes\/(purposes|methods-per-purpose|purpose-registrations)\.e2e\./,
    ],
  },
  // src/verification/paid-start.ts and flow-outcomes.ts (issue 42's start path, without the in-doubt suites,
  // which wait on real time-outs: a survivor of the first run with them, start-path, ran every test of the
  // scope in minutes on the loaded machine). What a caller and the host see of a paid start: its answers to
  // the API's failures (errors, start-upstream-answers), the budget a refused one gives back (refused-starts),
  // the expiry it asks for (start-expiry), the erasure index it reserves and frees (erasure-callers,
  // erasure-refused-start-slot) and a start erased in flight (erasure-in-flight, erasure-start-in-flight);
  // how each flow ends: its history entry (history; the host's assessStart answer kept on it: assess-start),
  // log line (logs) and span (tracing).
  'paid-start': {
    folder: 'verification',
    specs: PAID_START,
  },
  // src/verification/flow-outcomes.ts: paid-start's suites, and those that read what it records of a start
  // beside its entry, log line and span: the purpose on its history entry (purposes), the method figures'
  // callers and givers (learning-steering: an account, a visitor, an address, the host's own starts), a start
  // while its method is healthy taught to the cells the first method is chosen from (learned-fallback) and
  // one while it is degraded kept out of them (health-outage-keeps-method-out, 2 tests of 14 s).
  'flow-outcomes': {
    folder: 'verification',
    specs: [
      ...PAID_START,
      /^test\/purposes\/purposes\.e2e\./,
      /^test\/journeys\/(learned-fallback|learning-steering)\.e2e\./,
      /^test\/attacks\/health-outage-keeps-method-out\./,
    ],
  },
  // src/verification/in-doubt-starts.ts and flow-outcomes.ts (issue 42's start path): a start in doubt
  // remembered and adopted by its webhook (test/events, test/multi-instance, the erasures that meet one), and
  // how each start, switch and check ends: its history entry and refusal callers (test/history), log line
  // (logs), span (tracing), answer (errors) and the ledger of a start erased in flight. Every start reaches
  // flow-outcomes.ts: without the rest of start-flows' suites (hosts per test, a survivor ran them all), and
  // without the suites that run their flows in beforeAll (ledger, method-stats: every mutant static).
  'start-path': {
    folder: 'verification',
    specs: [
      /^test\/events\/in-doubt-/,
      /^test\/multi-instance\/in-doubt-adoption\./,
      /^test\/privacy\/erasure-(in-doubt|in-flight)\./,
      /^test\/attacks\/erasure-(in-doubt-adopted-during|start-in-flight)\./,
      /^test\/history\/(history|history-refusal-budget)\./,
      /^test\/operations\/logs\./,
      /^test\/tracing\/tracing\.e2e\./,
      /^test\/client-routes\/errors\./,
    ],
  },
  // src/verification's status side (status-watch.ts, status-watcher.ts, status-view.ts; status.flow.ts and
  // journey-state.ts too): the status route and the status stream as twins, with and without `journey_token`
  // and after a restart (test/status-stream, journey-token-twins), the answers field for field, their log lines
  // and a stream's life (status-reads, stream-life), a verified number and its time (verified-at-clock,
  // verified-phone), a switched and a canceled journey's status (test/journeys' switch and cancel), a lost
  // record's rebuild and its meter, and a coalesced start at its session's expiry. Hosts booted per test but in
  // happy-paths. Left out: the rest of test/client-routes, test/journeys, test/reconciler and the status
  // attacks (with them, 27 files: a dry run of 3.5 min, then about 50 s a mutant on the loaded machine, some
  // 7 hours for 504), which reach every status read at many times the cost.
  'status-flows': {
    folder: 'verification',
    specs: [
      /^test\/status-stream\//,
      /^test\/sessions\/(journey-token-twins|verified-phone)\./,
      // A journey put back from its token after a restart (its device hint, an earlier step's verification,
      // a store that still holds it) and an owner's steps (journey-restart, journey-owner); what the guard
      // decides on (test/verified-phone: a step verified late, its time and purpose, its meter) and what a
      // change of phone reads of a verification (test/phone-change: a number taken off the account since).
      /^test\/sessions\/(journey-restart|journey-owner)\./,
      /^test\/verified-phone\//,
      /^test\/phone-change\//,
      /^test\/client-routes\/(happy-paths|status-reads|status-rebuild-unknown|verified-at-clock)\./,
      // cancel-without-webhooks: polls alone learn outcomes, so a journey never refreshed shows.
      /^test\/journeys\/(switch|cancel|cancel-without-webhooks)\.e2e\./,
      /^test\/attacks\/status-rebuild-retry-after\./,
      /^test\/protection\/coalescing-expiry\./,
    ],
  },
  // src/pumping's rules and counts (pumping-rules.ts, range-stats.ts, giver-shares.ts, range-bursts.ts,
  // range-holds.ts and the rest of the folder): their unit specs beside them (a defence over a MemoryStore on a
  // fixed clock) and the one-start-at-a-time parts of test/protection (holds, subjects, the window as a budget):
  // 109 tests, a first run of 43 s on the loaded machine. Left out: pumping-attacks.e2e and pumping-defence.e2e
  // (16 tests, 45 s: hosts over HTTP, every rule mutant reaches them, a survivor would run them all).
  'pumping-rules': {
    folder: 'pumping',
    specs: [/^src\/pumping\//, /^test\/protection\/pumping-(holds|subjects|windows\.properties)\./],
  },
  // src/protection/status-read-meter.ts: the status route's upstream read meters per caller and network and
  // what one instance remembers of a spent meter, on a MemoryStore and a fixed clock (the routes' suites boot
  // hosts; the round trips a poll past the meter waits for are test/protection/sequential-round-trips).
  'status-reads': {
    folder: 'protection',
    specs: [/^src\/protection\/status-read-meter\./, /^test\/protection\/status-read-meter-clock\./],
  },
  // src/protection/request-rate-limits.ts: the start and check limits, the free budget and its proofs, the
  // API's back-off (test/protection), the purposes' own limits (test/purposes).
  'request-limits': {
    folder: 'protection',
    specs: [/^src\/protection\/request-rate-limits\./, /^test\/protection\//, /^test\/purposes\//],
  },
  // src/protection's money and pacing rules (spend-cap.ts, open-spend.ts, proof-reserve.ts, price-estimator.ts,
  // protection-hold.ts, resend-cooldown.ts, wrong-code-budget.ts, start-coalescer.ts, before-start-hook.ts):
  // their unit specs beside them, on a MemoryStore and a fixed clock, the spend cap's properties included.
  'protection-rules': {
    folder: 'protection',
    specs: [/^src\/protection\//],
  },
  // src/protection/start-permit.ts, store-rate-limiter.ts and test-start-admission.ts: a start's permit and its
  // settlement (the API's 429 shared), the fixed-window counter every limit uses, and a test number's start under
  // a real one's limits.
  'start-permit': {
    folder: 'protection',
    specs: [
      /^src\/protection\//,
      /^test\/protection\/(start-permit|store-rate-limiter|upstream-back-off-bound)\./,
      /^test\/test-numbers\//,
    ],
  },
  // src/test-numbers/test-number-api.client.ts, the API client with test numbers: a test number's session
  // answered without the API (its start, status and check: test-numbers.e2e), a real number's sent on, and the
  // real bot link's shape lent to test links (test-number-attacks). The folder's other suites reach it through
  // every start at many times the cost.
  'test-number-client': {
    folder: 'test-numbers',
    specs: [/^test\/test-numbers\/(test-numbers|test-number-attacks)\.e2e\./],
  },
  // src/test-numbers/test-number-sessions.ts, the API's side of a test number's session: src/test-numbers' unit
  // specs, a test number's journeys (test-numbers.e2e), the attacks on them (test-number-attacks), checks racing
  // on one session, the wrong-code budgets and the spare slots. The attacks of test/attacks reach it through every
  // start, at many times the cost.
  'test-number-sessions': {
    folder: 'test-numbers',
    specs: [
      /^src\/test-numbers\/[^/]+\.spec\./,
      /^test\/test-numbers\/(test-numbers|test-number-attacks|test-session-races|test-numbers-wrong-code-budgets|test-numbers-spare-slots)\./,
    ],
  },
  // src/verification/verification.service.ts, the operations a host calls (each forwards to its flow): a
  // start, check, status and the methods over the routes (happy-paths), a switch and a cancel (test/journeys'
  // switch and cancel), a verified number read by the host (verified-phone) and the guard's read of it
  // (verified-phone-guard). Every host suite reaches the file: without the others, a survivor runs these.
  'verification-service': {
    folder: 'verification',
    specs: [
      /^test\/client-routes\/happy-paths\./,
      /^test\/journeys\/(switch|cancel)\.e2e\./,
      /^test\/sessions\/verified-phone\./,
      /^test\/verified-phone\/verified-phone-guard\./,
    ],
  },
  // src/account/verification-account.service.ts, the host's reads of the account: balance, usage, prices and
  // estimates (account), the method figures (method-stats) and health (a kept record unreadable: the report
  // read on an instance), over hosts booted per test (the folder's unit specs never make the service).
  'account-service': {
    folder: 'account',
    specs: [
      /^test\/operations\/(account|method-stats)\.e2e\./,
      /^test\/attacks\/health-kept-record-unreadable\./,
    ],
  },
  // src/http/browser-key.cookie.ts and global-prefix.ts: the browser key's cookie read and written, the
  // global prefix and the matched route's literal path (their unit specs), the cookie's scope under a global
  // prefix and over https (global-prefix), the browser a pending session is handed back to (coalescing), and
  // a route parameter or URI version in the cookie's path (the cookie-path attacks).
  'browser-key': {
    folder: 'http',
    specs: [
      /^src\/http\/(browser-key\.cookie|global-prefix|literal-prefix)\.spec\./,
      /^test\/client-routes\/global-prefix\./,
      /^test\/protection\/coalescing\./,
      /^test\/attacks\/cookie-path-/,
    ],
  },
  // src/test-numbers/test-session-store.ts, a test session's entries: its delivery read back and a spare
  // slot's claim (their unit specs), a test number's journeys (test-numbers.e2e), checks and reads racing on
  // one session (test-session-races), its entries kept an hour past its end (test-session-retention), the
  // spare slots a network's starts take (test-numbers-spare-slots) and an erasure of its entries.
  'test-session-store': {
    folder: 'test-numbers',
    specs: [
      /^src\/test-numbers\/(test-session-delivery|spare-slot-claim)\.spec\./,
      /^test\/test-numbers\/(test-numbers|test-session-races|test-session-retention|test-numbers-spare-slots)\./,
      /^test\/privacy\/erasure-test-number\./,
      // A spare session whose code was entered keeps its slot from a stranger's start (added after the row).
      /^test\/attacks\/test-numbers-overflow-slot-forced\./,
    ],
  },
  // src/http/verification.problems.ts, the problem document and each route's error codes as the OpenAPI
  // document shows them (openapi.e2e, on Express and Fastify), and the element's words for every code a
  // route answers (messages). Every mutant of the file is static (decorators and a table read at import).
  openapi: {
    folder: 'http',
    specs: [/^test\/client-routes\/openapi\./, /^test\/element\/messages\./],
  },
  // src/account/verification-health.indicator.ts, the host's health check: its unit specs (the read's deadline,
  // no timer left behind; the answer without @nestjs/terminus) and the check over a host against the sandbox's
  // balance and failures (test/operations/health).
  'health-indicator': {
    folder: 'account',
    specs: [
      /^src\/account\/verification-health\.indicator\.(no-terminus\.)?spec\./,
      /^test\/operations\/health\./,
    ],
  },
  // src/pumping/pumping-report.ts, a hold's report: the event, log line and metric of a hold (its unit spec)
  // and the defence that reports it (the pumping-defence unit specs).
  'pumping-report': {
    folder: 'pumping',
    specs: [/^src\/pumping\/pumping-(report|defence)/],
  },
  // src/protection/protection-events.ts, what protection does with a session's events: its unit spec, a spend
  // cap's ended sessions settled (charged if delivered or not known, given back if not, and what the usage
  // says since; a store failing the settlement; a lost record), and a verified start's free-start proof
  // given back (free-start-networks).
  'protection-events': {
    folder: 'protection',
    specs: [
      /^src\/protection\/protection-events\.spec\./,
      /^test\/protection\/(spend-cap|spend-cap-usage|spend-cap-end-store-failure|spend-cap-lost-record|free-start-networks)\./,
    ],
  },
  // src/verification/erasure-keys.ts, the counters an erasure deletes: its unit spec, and what a number's or an
  // owner's erasure leaves in the store and which callers it reaches (erasure, erasure-callers,
  // erasure-wrong-code-budget: hosts over HTTP, the store read back).
  'erasure-keys': {
    folder: 'verification',
    specs: [
      /^src\/verification\/erasure-keys\.spec\./,
      /^test\/privacy\/erasure(-callers|-wrong-code-budget)?\.e2e\./,
    ],
  },
  // src/options/purposes.options.ts, a purpose's policy read at a start: src/options' unit specs, and the
  // purposes over hosts (purposes, methods-per-purpose, purpose-registrations: a purpose accepted or not, its
  // methods, its own limits and claim's life).
  'purposes-options': {
    folder: 'options',
    specs: [
      /^src\/options\//,
      /^test\/purposes\/(purposes|methods-per-purpose|purpose-registrations)\.e2e\./,
    ],
  },
  // src/protection/assess-start-hook.ts and start-hooks.ts: the host's risk and check hooks of a start.
  // src/history/history-links.ts: which rings of the other side an erasure reaches, against its unit spec
  // (one slot per pair, a claim's minute, a link at its TTL, an unlink); the erasures that follow the links
  // over hosts are test/attacks/history-links-* and history-erasure-* (the history folder's scope).
  'history-links': {
    folder: 'history',
    specs: [/^src\/history\/history-links\.spec\./],
  },
  'start-hooks': {
    folder: 'protection',
    specs: [
      /^src\/protection\/(assess-start-hook|start-hooks)\./,
      /^test\/purposes\/assess-start\./,
      /^test\/protection\/(before-start|graded-answers)\./,
    ],
  },
};

const folder = process.env.MUTATE_FOLDER;
if (folder !== undefined && !(folder in SPECS_BY_FOLDER)) {
  throw new Error(`MUTATE_FOLDER=${folder}: not one of ${Object.keys(SPECS_BY_FOLDER).join(', ')}`);
}
const scope = process.env.MUTATE_SPECS;
if (scope !== undefined && SPECS_BY_SCOPE[scope]?.folder !== folder) {
  const names = Object.entries(SPECS_BY_SCOPE).map(([name, s]) => `${name} (MUTATE_FOLDER=${s.folder})`);
  throw new Error(`MUTATE_SPECS=${scope}: not one of ${names.join(', ')}`);
}
const inReach =
  folder === undefined
    ? mutationSpecs
    : mutationSpecs.filter((path) =>
        (scope === undefined ? SPECS_BY_FOLDER[folder] : SPECS_BY_SCOPE[scope].specs).some((re) =>
          re.test(path),
        ),
      );

// The long-first sequencer exists for the full suite's two workers; a mutant runs the files that reached it.
const { testSequencer: _sequencer, ...mutationBase } = base;

export default {
  ...mutationBase,
  moduleNameMapper: {
    ...mutationBase.moduleNameMapper,
    // Stryker's sandbox has no node_modules folder of its own: resolve from here, as Node would.
    '^libphonenumber-js/max$': createRequire(import.meta.url).resolve('libphonenumber-js/max'),
  },
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: inReach.map((path) => `<rootDir>/${path}`),
  testSequencer: '<rootDir>/test/covering-files.sequencer.mjs',
  // A mutant's run stops at its first failing test: the rest of its file is skipped (the environment; Stryker
  // resolves its path itself, so no <rootDir>) and no further file is loaded (the runner).
  testEnvironment: join(root, 'test/mutation/first-failure.environment.cjs'),
  runner: '<rootDir>/test/mutation/first-failure.runner.cjs',
};
