import {
  applyDecorators,
  Inject,
  Injectable,
  UseGuards,
  UsePipes,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import { VerificationClientError } from '../core/verification.errors.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { ApiBody, ApiConsumes } from './openapi-decorators.js';
import { VerificationValidationPipe, type BodyDto } from './validation.pipe.js';

/** What the guard reads of an Express or Fastify request. */
interface BodyRequest {
  headers: Record<string, string | string[] | undefined>;
  rawBody?: unknown;
}

/**
 * The request rules of the module's body routes (start, check, and every later POST of the
 * module), checked before any body field is read and before protection counts anything:
 *
 * - a browser's cross-site request (`Sec-Fetch-Site: cross-site`) is refused with 403
 *   `cross_site_request` unless its `Origin` is in `routes.allowedOrigins`: another site's page
 *   cannot make its visitors start paid verifications;
 * - the body must be `application/json` (415 `unsupported_media_type`): a cross-site HTML form
 *   (urlencoded, multipart, text/plain) cannot be sent without a CORS preflight;
 * - the body may be at most `routes.bodyLimit` bytes (413 `payload_too_large`), read from
 *   `Content-Length` (or the raw body when the request was chunked): the routes take two short
 *   strings, and nothing larger is validated.
 *
 * A route guard, not middleware or a body-parser setting: it touches only the module's routes and
 * leaves the host's parsers, limits and other routes as they are (see docs/ARCHITECTURE.md).
 */
@Injectable()
export class ClientBodyGuard implements CanActivate {
  private readonly allowedOrigins: ReadonlySet<string>;
  private readonly bodyLimit: number;

  constructor(@Inject(RESOLVED_VERIFICATION_OPTIONS) options: ResolvedVerificationOptions) {
    this.allowedOrigins = new Set(options.routes.allowedOrigins);
    this.bodyLimit = options.routes.bodyLimit;
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<BodyRequest>();
    const headers = request.headers;
    if (header(headers, 'sec-fetch-site') === 'cross-site') {
      const origin = header(headers, 'origin');
      if (origin === undefined || !this.allowedOrigins.has(origin))
        throw new VerificationClientError(
          'cross_site_request',
          'Requests from another site are not accepted on this route',
        );
    }
    if (!isJson(header(headers, 'content-type')))
      throw new VerificationClientError(
        'unsupported_media_type',
        'The request body must be application/json',
      );
    if (bodySize(request) > this.bodyLimit)
      throw new VerificationClientError(
        'payload_too_large',
        `The request body must be at most ${this.bodyLimit} bytes`,
      );
    return true;
  }
}

/**
 * Marks a handler as one of the module's body routes: the request rules above, then the body validated
 * against `dto` (its OpenAPI body too). The handler declares its body `Readonly<dto>`, whose design type
 * is `Object`: a host's global ValidationPipe, which runs first, passes it by, and the module answers.
 */
export function ClientBodyRoute(dto: BodyDto): MethodDecorator {
  return applyDecorators(
    UseGuards(ClientBodyGuard),
    UsePipes(new VerificationValidationPipe(dto)),
    ApiConsumes('application/json'),
    ApiBody({ type: dto }),
  );
}

function header(headers: BodyRequest['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** `application/json`, with or without parameters (`; charset=utf-8`), in any letter case. */
function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim();
  return mediaType.toLowerCase() === 'application/json';
}

/** Declared length, or the raw body's length when none was declared (chunked); 0 when neither is known. */
function bodySize(request: BodyRequest): number {
  const declared = header(request.headers, 'content-length');
  if (declared !== undefined) {
    const length = Number(declared);
    return Number.isFinite(length) ? length : Number.POSITIVE_INFINITY;
  }
  return Buffer.isBuffer(request.rawBody) ? request.rawBody.length : 0;
}
