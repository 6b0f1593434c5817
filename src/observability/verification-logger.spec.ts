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
    expect(app.printed).toStrictEqual(['webhook result=failed phone=+7******4567']);

    expect(logger({ logLevels: ['error'] }).isLevelEnabled('warn')).toBe(false);
  });

  it('asks the app’s logger per line: a logger set after boot is followed', () => {
    const log = logger();
    Logger.overrideLogger(false);
    expect(log.isLevelEnabled('log')).toBe(false);
    const app = new RecordingConsoleLogger();
    Logger.overrideLogger(app);
    log.log('start', { method: 'sms' });
    expect(app.printed).toStrictEqual(['start method=sms']);
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
    expect(lines).toStrictEqual(['log start method=sms', 'error start failed error=Error']);
  });
});

describe('VerificationLogger: what a host’s own logger receives', () => {
  afterEach(() => Logger.overrideLogger(new ConsoleLogger()));

  /** A host logger recording each call: its level, line and the context the module gave. */
  function recording() {
    const calls: [string, string, ...unknown[]][] = [];
    const at =
      (level: string) =>
      (line: string, ...context: unknown[]) =>
        calls.push([level, line, ...context]);
    const own: LoggerService = {
      log: at('log'),
      warn: at('warn'),
      error: at('error'),
      fatal: at('fatal'),
      debug: at('debug'),
      verbose: at('verbose'),
    };
    return { own, calls };
  }
  const ALL = ['log', 'warn', 'error', 'fatal', 'debug', 'verbose'] as const;

  it('each level reaches its own method, with the module’s context name', () => {
    const { own, calls } = recording();
    const log = logger({ logger: own, logLevels: [...ALL] });
    log.log('a');
    log.warn('b');
    log.error('c');
    log.debug('d');
    log.verbose('e');
    expect(calls).toStrictEqual([
      ['log', 'a', 'PhoneVerification'],
      ['warn', 'b', 'PhoneVerification'],
      ['error', 'c', 'PhoneVerification'],
      ['debug', 'd', 'PhoneVerification'],
      ['verbose', 'e', 'PhoneVerification'],
    ]);
  });

  it('a logger without debug or verbose is skipped for those levels, and never fails a call', () => {
    const lines: string[] = [];
    const own: LoggerService = { log: (m: string) => lines.push(m), warn: jest.fn(), error: jest.fn() };
    const log = logger({ logger: own, logLevels: [...ALL] });
    expect(() => {
      log.debug('d');
      log.verbose('e');
    }).not.toThrow();
    log.log('a');
    expect(lines).toStrictEqual(['a']);
  });

  it('logLevels: false writes nothing at any level', () => {
    const { own, calls } = recording();
    const log = logger({ logger: own, logLevels: false });
    for (const level of ALL) expect(log.isLevelEnabled(level)).toBe(false);
    log.error('c');
    expect(calls).toStrictEqual([]);
  });

  it('a line about a test number’s session, by its request id or its number, says test=true; others do not', () => {
    const { own, calls } = recording();
    const reviewer = '+79990000042';
    const log = logger({
      logger: own,
      logLevels: ['log'],
      testNumbers: { numbers: [{ phoneNumber: reviewer, code: '246810' }] },
    });
    log.log('a', { request_id: 'test_0001' });
    log.log('b', { phone: reviewer });
    log.log('c', { request_id: 'real-0001', phone: '+79123454567' });
    log.log('d', { request_id: 'test_0002', test: false });
    log.log('e');
    // An id not known yet (null) is no test session, and the line is written.
    log.log('f', { request_id: null });
    expect(calls.map(([, line]) => line)).toStrictEqual([
      'a request_id=test_000… test=true',
      'b phone=+7******0042 test=true',
      'c request_id=real-000… phone=+7******4567',
      'd request_id=test_000… test=false',
      'e',
      'f request_id=null',
    ]);
  });

  it('no line carries the API secret, its Basic header, a webhook secret or the data key', () => {
    const { own, calls } = recording();
    const dataKey = Buffer.alloc(32, 7).toString('base64');
    const webhookSecret = `whsec_${Buffer.from('a webhook signing key, 32 bytes!').toString('base64')}`;
    const log = logger({ logger: own, logLevels: ['log'], dataKey, webhooks: { secret: webhookSecret } });
    const basic = Buffer.from(`${API.apiKey}:${API.apiSecret}`).toString('base64');
    log.log(`x ${API.apiSecret} ${dataKey} ${webhookSecret.slice(6)} Authorization:${basic}`);
    const line = calls[0]![1];
    for (const secret of [API.apiSecret, dataKey, webhookSecret.slice(6), basic])
      expect(line).not.toContain(secret);
    expect(line.split('[redacted]')).toHaveLength(5);
  });

  it('redact() scrubs free text a host builds: numbers masked, secrets removed', () => {
    const log = logger();
    expect(log.redact(`+79123454567 ${API.apiSecret}`)).toBe('+7******4567 [redacted]');
  });
});
