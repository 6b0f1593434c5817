import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { VerificationLogger } from './operations/verification-logger.js';
import { VerificationStoreUnavailableError } from './store/store-unavailable.error.js';
import { VerificationClientError } from './verification.errors.js';

/**
 * Renders every error of the module's own routes as `application/problem+json` with an
 * `error_code`. Bound with @UseFilters on the module's controllers only: the host's error format
 * is not touched. Unexpected errors become 503 `service_unavailable` and are logged by name and
 * message only (never a request or its headers).
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly logger: VerificationLogger,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const problem = this.toClientError(exception);
    const http = this.adapterHost.httpAdapter;
    const response = host.switchToHttp().getResponse();
    http.setHeader(response, 'Content-Type', 'application/problem+json');
    http.setHeader(response, 'Cache-Control', 'no-store');
    if (problem.retryAfterSeconds !== undefined)
      http.setHeader(response, 'Retry-After', String(problem.retryAfterSeconds));
    http.reply(response, JSON.stringify(problem.toProblem()), problem.status);
  }

  private toClientError(exception: unknown): VerificationClientError {
    if (exception instanceof VerificationClientError) return exception;
    if (exception instanceof VerificationStoreUnavailableError) {
      this.logger.error('store unavailable', { error: exception.message });
      return new VerificationClientError(
        'service_unavailable',
        'Phone verification is temporarily unavailable',
        {},
        5,
      );
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 413)
        return new VerificationClientError('payload_too_large', 'The request body is too large');
      if (status === 404) return new VerificationClientError('not_found');
      // A host's own rate limiting (e.g. a global @nestjs/throttler guard) stays a 429; its Retry-After header is kept.
      if (status === 429)
        return new VerificationClientError('rate_limit_exceeded', 'Too many requests, try again later');
      if (status >= 400 && status < 500)
        return new VerificationClientError('validation_error', 'The request is not valid', {
          errors: [{ field: null, message: safeMessage(exception) }],
        });
    }
    const name = exception instanceof Error ? exception.name : typeof exception;
    this.logger.error('unexpected error on a verification route', { error: name });
    return new VerificationClientError(
      'service_unavailable',
      'Phone verification is temporarily unavailable',
      {},
      5,
    );
  }
}

function safeMessage(exception: HttpException): string {
  const message = exception.message;
  return typeof message === 'string' ? message.slice(0, 200) : 'invalid request';
}
