import { Controller, HttpCode, Post, Req, UseFilters, type Type } from '@nestjs/common';
import { errorText } from '../core/error-text.js';
import { VerificationOptionsError } from '../core/option-rules.js';
import { ApiExcludeController } from '../http/openapi-decorators.js';
import { VerificationProblemFilter } from '../http/verification-problem.filter.js';
import type { WebhookHeaders } from './standard-webhooks.verifier.js';
import { WebhookReceiver, type WebhookResult } from './webhook-receiver.js';

/** The request as Express and Fastify give it when the app was created with `rawBody: true`. */
export interface WebhookRequest {
  rawBody?: unknown;
  headers: WebhookHeaders;
  /** Express: the request stream itself. */
  readableEnded?: boolean;
  /** Fastify: the Node request under it. */
  raw?: { readableEnded?: boolean };
}

/** The 200 answer: the sender only needs the status; `result` helps whoever reads the sender's log. */
export interface WebhookAcknowledgement {
  received: true;
  result: WebhookResult;
}

/**
 * The server-to-server webhook route (not for frontends, so it is left out of the OpenAPI
 * document). `createWebhookController(path)` declares a fresh subclass per registration with its
 * own `@Controller(path)`: the path is a static option, no shared class's metadata is rewritten.
 */
@ApiExcludeController()
@UseFilters(VerificationProblemFilter)
export abstract class WebhookControllerBase {
  constructor(protected readonly receiver: WebhookReceiver) {}

  @Post()
  @HttpCode(200)
  async receive(@Req() request: WebhookRequest): Promise<WebhookAcknowledgement> {
    return {
      received: true,
      result: await this.receiver.receive(request.rawBody, request.headers, bodyWasRead(request)),
    };
  }
}

/**
 * Whether one of the host's body parsers read the request body: a parser consumes the stream, and
 * a content type no parser takes leaves it unread (Express passes such a request on untouched).
 */
function bodyWasRead(request: WebhookRequest): boolean {
  return (request.raw ?? request).readableEnded === true;
}

/** A controller class serving the webhook route at `path` (e.g. `verification/webhooks`). */
export function createWebhookController(
  path: string,
  decorators: ClassDecorator[] = [],
): Type<WebhookControllerBase> {
  @Controller(path)
  class VerificationWebhookController extends WebhookControllerBase {}
  // The host's decorators (`webhooks.decorators`) on this registration's own class only. This runs at
  // import, before the boot's option rules, so each entry is checked here, in both registration shapes.
  let decorated: Type<WebhookControllerBase> = VerificationWebhookController;
  for (const [i, decorate] of decorators.entries()) {
    const wrong = (what: string, options?: ErrorOptions) =>
      new VerificationOptionsError(
        `webhooks.decorators[${i}]`,
        `${what}: it must be a class decorator, like SkipThrottle()`,
        undefined,
        options,
      );
    if (typeof decorate !== 'function')
      throw wrong(`is not a function (${decorate === null ? 'null' : typeof decorate})`);
    let result: unknown;
    try {
      result = decorate(decorated);
    } catch (error) {
      // A method decorator such as Version() throws a bare TypeError on a class.
      throw wrong(`threw on the webhook controller class (${errorText(error)})`, { cause: error });
    }
    if (result instanceof Promise) throw wrong('returned a promise (a decorator runs once, at import)');
    if (typeof result !== 'function' || result === decorated) continue;
    // A class decorator may return a subclass to use instead; any other function is the decorator a
    // factory makes, given uncalled (`SkipThrottle` for `SkipThrottle()`): it decorated nothing.
    if (!(result.prototype instanceof decorated))
      throw wrong('returned a function instead of decorating the class (a factory given without its call?)');
    decorated = result as Type<WebhookControllerBase>;
  }
  return decorated;
}
