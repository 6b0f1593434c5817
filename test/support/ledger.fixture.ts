/** What the ledger specs share: a VerificationLedger built by hand on a store, over a played usage. */
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { LedgerDriftEvent } from '../../src/core/verification-events.js';
import { UsageReads } from '../../src/ledger/usage-reads.js';
import { VerificationLedger } from '../../src/ledger/verification-ledger.service.js';
import { resolveVerificationOptions } from '../../src/options/verification-options.resolver.js';
import type { LedgerOptions } from '../../src/options/verification.options.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationLogger } from '../../src/observability/verification-logger.js';
import { CapturingLogger } from './log-capture.js';
import { VerificationMetrics } from '../../src/observability/verification-metrics.js';
import { VerificationTelemetry } from '../../src/observability/verification-telemetry.js';

/** The API's usage as a spec plays it: `charged` per date (in `currency`), and the reads it was asked for. */
export class FakeUsage {
  charged = new Map<string, number>();
  currency = 'RUB';
  reads: string[] = [];
  failing = false;
}

/** A ledger without the event emitter (a host that did not import EventEmitterModule). */
export const NO_EMITTER = 'no emitter';

export function ledgerOn(
  store: VerificationStore,
  usage: FakeUsage,
  clock: () => number,
  ledger: LedgerOptions | false = {},
  name?: string,
  emitter: EventEmitter2 | typeof NO_EMITTER = new EventEmitter2(),
): {
  ledger: VerificationLedger;
  events: LedgerDriftEvent[];
  reads: UsageReads;
  /** The module's warning and error lines, as the host's logger received them. */
  logs: string[];
} {
  const options = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock,
    ledger,
    ...(name === undefined ? {} : { name }),
  });
  const api = {
    getUsage: async ({ from }: { from: string }) => {
      usage.reads.push(from);
      if (usage.failing) throw new Error('usage down');
      return {
        totalCost: { amount: usage.charged.get(from) ?? 0, currency: usage.currency },
        totalVerifications: 0,
        successful: 0,
      };
    },
  };
  const reads = new UsageReads(options, api as never, store);
  const events: LedgerDriftEvent[] = [];
  const host = new CapturingLogger();
  const logger = new VerificationLogger({ ...options, logger: host, logLevels: ['warn', 'error'] });
  // The registration's telemetry emits its ops events (tagged with its name) to the host's emitter.
  const telemetry = new VerificationTelemetry(
    logger,
    VerificationMetrics.disabled(),
    emitter === NO_EMITTER ? undefined : emitter,
    options,
  );
  if (emitter === NO_EMITTER)
    return {
      ledger: new VerificationLedger(options, store, telemetry, reads),
      events,
      reads,
      logs: host.lines,
    };
  emitter.on('verification.ledger_drift', (e: LedgerDriftEvent) => void events.push(e));
  return {
    ledger: new VerificationLedger(options, store, telemetry, reads),
    events,
    reads,
    logs: host.lines,
  };
}
