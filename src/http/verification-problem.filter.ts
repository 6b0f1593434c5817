import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { VerificationClientError, VerificationError } from '../core/verification.errors.js';

/**
 * Renders the package's own errors (VerificationError and its subclasses) as
 * `application/problem+json`, with `Retry-After` when the error gives one. It catches nothing else:
 * what a host raised on these routes (its guards, interceptors, pipes, its own HttpExceptions) and
 * the platform's own refusals keep their status and body and reach the host's filters.
 *
 * Bound with @UseFilters on the module's controllers. Exported for hosts that want problem+json on
 * their own routes that call VerificationService: `@UseFilters(VerificationProblemFilter)` on their
 * controller, or `app.useGlobalFilters(new VerificationProblemFilter(app.get(HttpAdapterHost)))`.
 * Without it, Nest's own filter renders the same status and document as `application/json`.
 */
@Catch(VerificationError)
export class VerificationProblemFilter implements ExceptionFilter<VerificationError> {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: VerificationError, host: ArgumentsHost): void {
    const http = this.adapterHost.httpAdapter;
    const response = host.switchToHttp().getResponse();
    http.setHeader(response, 'Content-Type', 'application/problem+json');
    http.setHeader(response, 'Cache-Control', 'no-store');
    if (exception instanceof VerificationClientError && exception.retryAfterSeconds !== undefined)
      http.setHeader(response, 'Retry-After', String(exception.retryAfterSeconds));
    http.reply(response, JSON.stringify(exception.getResponse()), exception.getStatus());
  }
}
