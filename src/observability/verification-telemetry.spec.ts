/**
 * The lines an operator reads of the module's work, as the module's logger receives them: a failed
 * webhook is a warning (a processed one is not), what a refusal quotes of its cause is bounded, and a
 * module that is torn down stops listening to the host's emitter (a host that keeps its emitter, or
 * builds the module again on it, hears each event once).
 */
import { describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { VerificationClientError } from '../core/verification.errors.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationMetrics } from './verification-metrics.js';
import { VerificationTelemetry } from './verification-telemetry.js';
import { recordingLogger } from '../../test/support/log-capture.js';

function telemetry(emitter?: EventEmitter2) {
  const { lines, logger } = recordingLogger();
  return { lines, telemetry: new VerificationTelemetry(logger, VerificationMetrics.disabled(), emitter) };
}

describe('VerificationTelemetry lines', () => {
  it('a webhook whose handling failed is a warning; one processed or a duplicate is an info line', () => {
    const { lines, telemetry: t } = telemetry();
    t.webhookHandled('failed', { event: 'verification.verified', status: 500 });
    t.webhookHandled('processed', { event: 'verification.verified', status: 200 });
    t.webhookHandled('duplicate');
    expect(lines.map(([level, message, fields]) => [level, message, fields?.result])).toEqual([
      ['warn', 'webhook', 'failed'],
      ['log', 'webhook', 'processed'],
      ['log', 'webhook', 'duplicate'],
    ]);
  });

  it('a refusal quotes at most 60 characters of its cause', () => {
    const { lines, telemetry: t } = telemetry();
    const reason = `r${'x'.repeat(58)}y${'z'.repeat(100)}`;
    t.checkFailed(new VerificationClientError('not_pending', 'The verification is failed', { reason }), {
      method: 'sms',
      requestId: 'req-1',
      latencyMs: 3,
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]![2]).toMatchObject({ error_code: 'not_pending', cause: reason.slice(0, 60) });
  });

  it('torn down, it no longer hears the emitter: events after onModuleDestroy write no line', async () => {
    const emitter = new EventEmitter2();
    const { lines, telemetry: t } = telemetry(emitter);
    await t.onModuleInit();
    const event = {
      event: 'verification.verified',
      requestId: 'req-2',
      method: 'sms',
      status: 'verified',
      phoneNumber: '+79161234567',
      source: 'webhook',
    };
    emitter.emit('verification.verified', event);
    expect(lines.map(([, message]) => message)).toEqual(['verification.verified']);
    t.onModuleDestroy();
    emitter.emit('verification.verified', event);
    expect(lines).toHaveLength(1);
    expect(emitter.listenerCount('verification.verified')).toBe(0);
  });

  it("a named registration's event writes no line of another registration's, the unnamed one's included", async () => {
    const emitter = new EventEmitter2();
    const event = { event: 'verification.verified', requestId: 'req-3', method: 'sms', status: 'verified' };
    for (const [name, heard] of [
      [undefined, []],
      ['north', []],
      ['south', ['verification.verified']],
    ] as const) {
      const { lines, logger } = recordingLogger();
      const t = new VerificationTelemetry(logger, VerificationMetrics.disabled(), emitter, {
        name,
      } as ResolvedVerificationOptions);
      await t.onModuleInit();
      emitter.emit('verification.verified', { ...event, registration: 'south' });
      t.onModuleDestroy();
      expect(lines.map(([, message]) => message)).toEqual(heard);
    }
  });
});
