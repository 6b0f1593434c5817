import { Inject, Injectable, Logger, type LoggerService, type LogLevel } from '@nestjs/common';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { LogRedactor, type LogFields } from './log-redaction.js';
import { isTestSession } from '../core/test-session.js';

/** Context name of every line the module writes. */
export const VERIFICATION_LOG_CONTEXT = 'PhoneVerification';

/**
 * The module's one logger: one line per meaningful event, `message key=value ...`, written to the
 * host's `logger` option or Nest's `Logger`, filtered by `logLevels` (`false` = silent). Every line
 * goes through LogRedactor: phone numbers masked, ids shortened, secrets never.
 */
@Injectable()
export class VerificationLogger {
  readonly #target: LoggerService;
  /** The host's logger is told the context; Nest's Logger instance already carries it. */
  readonly #context: string[];
  readonly #levels: ReadonlySet<LogLevel>;
  /** The host gave its own `logger` (it filters what it receives itself). */
  readonly #hostLogger: boolean;
  readonly #redactor: LogRedactor;
  /** The host's test numbers (`testNumbers`): a line about one of them says `test=true`. */
  readonly #testNumbers: ReadonlySet<string>;

  constructor(@Inject(RESOLVED_VERIFICATION_OPTIONS) options: ResolvedVerificationOptions) {
    this.#target = options.logger ?? new Logger(VERIFICATION_LOG_CONTEXT);
    this.#hostLogger = Boolean(options.logger);
    this.#context = options.logger ? [VERIFICATION_LOG_CONTEXT] : [];
    this.#levels = new Set(options.logLevels === false ? [] : options.logLevels);
    this.#testNumbers = new Set(options.testNumbers.numbers.map((entry) => entry.phoneNumber));
    this.#redactor = new LogRedactor({
      maskPhoneNumbers: options.maskPhoneNumbers,
      secrets: [
        options.api.apiSecret,
        ...options.webhooks.secrets,
        options.handleKey,
        ...(options.dataKey ? [options.dataKey] : []),
      ],
      credentials: { apiKey: options.api.apiKey, apiSecret: options.api.apiSecret },
    });
  }

  /**
   * Whether a line of this level is written: allowed by `logLevels`, and, when the lines go to Nest's
   * `Logger`, by the app's own logger settings (`logger: false`, or levels that leave it out), so
   * that a line nobody will see is never built and redacted. Asked per line: the app may change its
   * logger after boot.
   */
  isLevelEnabled(level: LogLevel): boolean {
    return this.#levels.has(level) && (this.#hostLogger || Logger.isLevelEnabled(level));
  }

  log(message: string, fields?: LogFields): void {
    this.#write('log', message, fields);
  }

  warn(message: string, fields?: LogFields): void {
    this.#write('warn', message, fields);
  }

  error(message: string, fields?: LogFields): void {
    this.#write('error', message, fields);
  }

  debug(message: string, fields?: LogFields): void {
    this.#write('debug', message, fields);
  }

  verbose(message: string, fields?: LogFields): void {
    this.#write('verbose', message, fields);
  }

  /** Redacts free text the same way (for hosts and other parts of the module that build their own text). */
  redact(text: string): string {
    return this.#redactor.scrub(text);
  }

  /** A line about a test number's session (by its id, or its number) says so, whatever wrote it. */
  #marked(fields: LogFields | undefined): LogFields | undefined {
    if (fields === undefined || fields.test !== undefined) return fields;
    const { request_id: requestId, phone } = fields;
    const test =
      (typeof requestId === 'string' && isTestSession(requestId)) ||
      (typeof phone === 'string' && this.#testNumbers.has(phone));
    return test ? { ...fields, test: true } : fields;
  }

  #write(level: LogLevel, message: string, fields: LogFields | undefined): void {
    if (!this.isLevelEnabled(level)) return;
    const line = this.#redactor.line(message, this.#marked(fields));
    try {
      switch (level) {
        case 'log':
          return this.#target.log(line, ...this.#context);
        case 'warn':
          return this.#target.warn(line, ...this.#context);
        case 'error':
          return this.#target.error(line, ...this.#context);
        case 'fatal':
          return (this.#target.fatal ?? this.#target.error).call(this.#target, line, ...this.#context);
        case 'debug':
          return this.#target.debug?.(line, ...this.#context);
        case 'verbose':
          return this.#target.verbose?.(line, ...this.#context);
      }
    } catch {
      // A failing host logger must not fail a verification.
    }
  }
}
