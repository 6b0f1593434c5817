import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { ConsoleLogger, Logger, type LoggerService } from '@nestjs/common';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import type { VerificationModuleOptions } from '../options/verification.options.js';
import { VerificationLogger } from './verification-logger.js';

const API = { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' };

function logger(options: Partial<VerificationModuleOptions> = {}): VerificationLogger {
  return new VerificationLogger(resolveVerificationOptions({ api: API, ...options }));
}

/** Nest's own console logger, recording what it would print. */
class RecordingConsoleLogger extends ConsoleLogger {
  readonly printed: string[] = [];
  protected override printMessages(messages: unknown[]): void {
    this.printed.push(...messages.map(String));
  }
}

describe('VerificationLogger: which lines are written', () => {
  afterEach(() => Logger.overrideLogger(new ConsoleLogger()));

  it('writes nothing, and builds nothing, when the app turned Nest’s logger off (`logger: false`)', () => {
    Logger.overrideLogger(false);
    const log = logger();
    expect(log.isLevelEnabled('log')).toBe(false);
    expect(log.isLevelEnabled('error')).toBe(false);
    const fields = {
      get phone(): string {
        throw new Error('a field of a line nobody sees was read');
      },
    };
    expect(() => log.log('start', fields)).not.toThrow();
  });

  it('follows the levels the app gave Nest’s console logger, and the module’s own `logLevels`', () => {
    const app = new RecordingConsoleLogger({ logLevels: ['warn', 'error'] });
    Logger.overrideLogger(app);
    const log = logger();
    expect(log.isLevelEnabled('log')).toBe(false);
    expect(log.isLevelEnabled('warn')).toBe(true);
    log.log('start', { method: 'sms' });
    log.warn('webhook', { result: 'failed', phone: '+79123454567' });
    expect(app.printed).toEqual(['webhook result=failed phone=+7******4567']);

    expect(logger({ logLevels: ['error'] }).isLevelEnabled('warn')).toBe(false);
  });

  it('asks the app’s logger per line: a logger set after boot is followed', () => {
    const log = logger();
    Logger.overrideLogger(false);
    expect(log.isLevelEnabled('log')).toBe(false);
    const app = new RecordingConsoleLogger();
    Logger.overrideLogger(app);
    log.log('start', { method: 'sms' });
    expect(app.printed).toEqual(['start method=sms']);
  });

  it('gives every allowed level to a host’s own `logger` (it filters by itself), and only those', () => {
    Logger.overrideLogger(false);
    const lines: string[] = [];
    const own: LoggerService = {
      log: (message: string) => lines.push(`log ${message}`),
      warn: (message: string) => lines.push(`warn ${message}`),
      error: (message: string) => lines.push(`error ${message}`),
      debug: jest.fn(),
    };
    const log = logger({ logger: own, logLevels: ['log', 'error'] });
    log.log('start', { method: 'sms' });
    log.warn('webhook', { result: 'failed' });
    log.error('start failed', { error: 'Error' });
    expect(lines).toEqual(['log start method=sms', 'error start failed error=Error']);
  });
});
