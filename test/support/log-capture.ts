import type { LoggerService } from '@nestjs/common';
import type { VerificationLogger } from '../../src/observability/verification-logger.js';

/** A Nest logger that keeps every line (message, context, stack) for assertions. */
export class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];

  private keep(level: string, message: unknown, rest: unknown[]): void {
    const text = [message, ...rest]
      .map((part) =>
        part instanceof Error
          ? `${part.message}\n${part.stack}`
          : typeof part === 'string'
            ? part
            : JSON.stringify(part),
      )
      .join(' ');
    this.lines.push(`${level} ${text}`);
  }
  log(message: unknown, ...rest: unknown[]): void {
    this.keep('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.keep('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.keep('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.keep('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.keep('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.keep('fatal', message, rest);
  }
}

/** Captures everything written to stdout and stderr until `stop()`. */
export function captureProcessOutput(): { text: () => string; stop: () => void } {
  const chunks: string[] = [];
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const wrap =
    (original: typeof out) =>
    (chunk: unknown, ...args: unknown[]): boolean => {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      return (original as (c: unknown, ...a: unknown[]) => boolean)(chunk, ...args);
    };
  process.stdout.write = wrap(out) as typeof process.stdout.write;
  process.stderr.write = wrap(err) as typeof process.stderr.write;
  return {
    text: () => chunks.join(''),
    stop: () => {
      process.stdout.write = out;
      process.stderr.write = err;
    },
  };
}

/** A line as the module's VerificationLogger is handed it: level, message, fields (before redaction). */
export type LoggerLine = [level: string, message: string, fields: Record<string, unknown> | undefined];

/** A stand-in VerificationLogger that keeps each line it is handed; `debug`: whether debug lines are on. */
export function recordingLogger(debug = true): { lines: LoggerLine[]; logger: VerificationLogger } {
  const lines: LoggerLine[] = [];
  const at =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void =>
      void lines.push([level, message, fields]);
  const logger = {
    log: at('log'),
    warn: at('warn'),
    error: at('error'),
    debug: at('debug'),
    isLevelEnabled: (level: string) => level !== 'debug' || debug,
  } as unknown as VerificationLogger;
  return { lines, logger };
}
