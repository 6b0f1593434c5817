/** What the ledger specs share: a VerificationLedger built by hand on a store, over a played usage. */
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { LedgerDriftEvent } from '../../src/core/verification-events.js';
import { UsageReads } from '../../src/ledger/usage-reads.js';
import { VerificationLedger } from '../../src/ledger/verification-ledger.service.js';
import { resolveVerificationOptions } from '../../src/options/verification-options.resolver.js';
import type { LedgerOptions } from '../../src/options/verification.options.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { telemetryOf } from './telemetry.js';

const rub = (amount: number) => ({ amount, currency: 'RUB' });

/** The API's usage as a spec plays it: `charged` per date, and the reads it was asked for. */
export class FakeUsage {
  charged = new Map<string, number>();
  reads: string[] = [];
  failing = false;
}

export function ledgerOn(
  store: VerificationStore,
  usage: FakeUsage,
  clock: () => number,
  ledger: LedgerOptions | false = {},
  name?: string,
): { ledger: VerificationLedger; events: LedgerDriftEvent[]; reads: UsageReads } {
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
        totalCost: rub(usage.charged.get(from) ?? 0),
        totalVerifications: 0,
        successful: 0,
      };
    },
  };
  const reads = new UsageReads(options, api as never, store);
  const emitter = new EventEmitter2();
  const events: LedgerDriftEvent[] = [];
  emitter.on('verification.ledger_drift', (e: LedgerDriftEvent) => void events.push(e));
  return {
    ledger: new VerificationLedger(options, store, telemetryOf(options, undefined, emitter), reads),
    events,
    reads,
  };
}
