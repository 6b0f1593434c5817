import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';

/** A refusal of one of the sample's own `/demo` routes, rendered as problem+json like the module's. */
export class DemoProblem extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'DemoProblem';
  }
}

const CODES: Record<number, string> = { 400: 'validation_error', 404: 'not_found', 413: 'payload_too_large' };

/** problem+json with an `error_code` for the `/demo` routes; unexpected errors are a 503, logged by name only. */
@Catch()
export class DemoProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('SampleApp');

  catch(exception: unknown, host: ArgumentsHost): void {
    const problem = this.toProblem(exception);
    const response = host.switchToHttp().getResponse<{
      status(code: number): { type(t: string): { send(body: string): void } };
    }>();
    response
      .status(problem.status)
      .type('application/problem+json')
      .send(
        JSON.stringify({
          type: `urn:nestjs-phone-verification:sample:${problem.errorCode}`,
          title: problem.errorCode.replace(/_/g, ' '),
          status: problem.status,
          detail: problem.detail,
          error_code: problem.errorCode,
        }),
      );
  }

  private toProblem(exception: unknown): DemoProblem {
    if (exception instanceof DemoProblem) return exception;
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status < 500)
        return new DemoProblem(status, CODES[status] ?? 'validation_error', exception.message);
    }
    this.logger.error(`demo route failed: ${exception instanceof Error ? exception.name : typeof exception}`);
    return new DemoProblem(503, 'service_unavailable', 'The demo could not do that right now');
  }
}
