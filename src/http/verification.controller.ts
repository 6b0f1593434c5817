import {
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  Inject,
  Optional,
  Param,
  Post,
  Query,
  Req,
  Res,
  UseFilters,
  type Type,
} from '@nestjs/common';
import { ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiResponse, ApiTags } from './openapi-decorators.js';
import { VerificationService } from '../verification/verification.service.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { callerOwner } from '../options/host-request.js';
import { ModuleRef } from '@nestjs/core';
import { literalPrefix, matchedRoute, servedPath } from './global-prefix.js';
import { newBrowserKey, readBrowserKey, setBrowserKeyCookie } from './browser-key.cookie.js';
import { CancelVerificationDto } from './cancel-verification.dto.js';
import { CheckVerificationDto } from './check-verification.dto.js';
import { ClientBodyRoute } from './client-body.guard.js';
import { clientIp } from '../core/client-request.js';
import { VerificationProblemFilter } from './verification-problem.filter.js';
import { StartVerificationDto } from './start-verification.dto.js';
import { SwitchVerificationDto } from './switch-verification.dto.js';
import { StatusStreamHub } from './status-stream.hub.js';
import { MAX_JOURNEY_TOKEN_CHARS } from '../core/verification-handle.codec.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { ApiProblemResponses, ROUTE_ERROR_CODES } from './verification.problems.js';
import {
  CancelVerificationResponse,
  CheckVerificationResponse,
  StartVerificationResponse,
  VerificationMethodsResponse,
  VerificationStatusResponse,
} from './verification.responses.js';

/** The `journey_token` query parameter of the GET routes (see StatusView.journeyToken). */
const JOURNEY_TOKEN_QUERY = {
  name: 'journey_token',
  required: false,
  type: String,
  description:
    'The last `journey_token` an answer gave (after a switch): lets a server that lost the journey (a restart) follow its current step',
};

/** The `purpose` query parameter of `GET /methods`. */
const PURPOSE_QUERY = {
  name: 'purpose',
  required: false,
  type: String,
  description:
    'Only the methods a start of this purpose may use (`signup`, `login`, `step_up`, `change_phone`, or a declared one)',
};

/**
 * The frontend-facing routes. The handlers live here; `createVerificationController(prefix)`
 * declares a fresh subclass per registration with its own `@Controller(prefix)`, so the prefix is
 * a static option and no shared class's metadata is ever rewritten at runtime.
 */
@ApiTags('verification')
@ApiProduces('application/json')
@UseFilters(VerificationProblemFilter)
export abstract class VerificationControllerBase {
  constructor(
    protected readonly verification: VerificationService,
    @Inject(RESOLVED_VERIFICATION_OPTIONS) protected readonly options: ResolvedVerificationOptions,
    // Optional: a host's subclass written before the stream route calls super() with two arguments.
    @Optional() protected readonly streams?: StatusStreamHub,
  ) {}

  /** Property-injected: a host's subclass calls super() with the arguments above only. */
  @Inject(ModuleRef) @Optional() private readonly moduleRef?: ModuleRef;
  #routesPath: string | undefined;

  /**
   * Where the client routes are served: the route the start request matched, as the platform declared it
   * (global prefix and URI version included, never the request's own URL: `…/start/` must not scope the
   * cookie to one route), less its `/start`; else as declared (global prefix and `routes.prefix`).
   */
  private routesPath(request: unknown): string {
    const matched = matchedRoute(request)?.replace(/\/+$/, '');
    if (matched?.endsWith('/start')) return literalPrefix(matched.slice(0, -'/start'.length) || '/');
    return (this.#routesPath ??= literalPrefix(servedPath(this.moduleRef, this.options.routes.prefix)));
  }

  @Post('start')
  @ClientBodyRoute(StartVerificationDto)
  @ApiOperation({ summary: 'Start a verification of a phone number' })
  @ApiResponse({ status: 201, type: StartVerificationResponse })
  @ApiProblemResponses(ROUTE_ERROR_CODES.start)
  async start(
    @Body() body: Readonly<StartVerificationDto>,
    @Req() request: unknown,
    @Res({ passthrough: true }) response: unknown,
  ): Promise<StartVerificationResponse> {
    const owner = await this.owner(request);
    // Without an owner, only the same browser (its cookie) is handed a pending session back, or
    // told exactly when its own cooldown ends.
    const { coalesceStarts, resendCooldownMs } = this.options.limits;
    const sentKey = owner === undefined ? readBrowserKey(request) : undefined;
    const browserKey =
      owner === undefined && (coalesceStarts || resendCooldownMs !== false)
        ? (sentKey ?? newBrowserKey())
        : undefined;
    const view = await this.verification.start({
      phoneNumber: body.phone_number,
      method: body.method,
      device: body.device,
      purpose: body.purpose,
      owner,
      ip: clientIp(request),
      browserKey,
      request,
    });
    if (browserKey !== undefined && browserKey !== sentKey)
      setBrowserKeyCookie(request, response, browserKey, this.routesPath(request));
    return StartVerificationResponse.from(view);
  }

  @Post('check')
  @ClientBodyRoute(CheckVerificationDto)
  @HttpCode(200)
  @ApiOperation({ summary: 'Submit the code the user received' })
  @ApiResponse({ status: 200, type: CheckVerificationResponse })
  @ApiProblemResponses(ROUTE_ERROR_CODES.check)
  async check(
    @Body() body: Readonly<CheckVerificationDto>,
    @Req() request: unknown,
  ): Promise<CheckVerificationResponse> {
    const view = await this.verification.check({
      verificationId: body.verification_id,
      code: body.code,
      journeyToken: body.journey_token,
      owner: await this.owner(request),
      ip: clientIp(request),
      request,
    });
    return CheckVerificationResponse.from(view);
  }

  @Post('switch')
  @ClientBodyRoute(SwitchVerificationDto)
  @ApiOperation({
    summary:
      "Move a verification to another method (the policy's next, or a named one) for the same number; the verification_id stays",
  })
  @ApiResponse({ status: 201, type: StartVerificationResponse })
  @ApiProblemResponses(ROUTE_ERROR_CODES.switch)
  async switchMethod(
    @Body() body: Readonly<SwitchVerificationDto>,
    @Req() request: unknown,
  ): Promise<StartVerificationResponse> {
    const owner = await this.owner(request);
    const view = await this.verification.switchMethod({
      verificationId: body.verification_id,
      method: body.method,
      journeyToken: body.journey_token,
      owner,
      ip: clientIp(request),
      // The browser that started it gets its cooldown's exact timing (its cookie; none is set here).
      browserKey: owner === undefined ? readBrowserKey(request) : undefined,
      request,
    });
    return StartVerificationResponse.from(view);
  }

  @Post('cancel')
  @ClientBodyRoute(CancelVerificationDto)
  @HttpCode(200)
  @ApiOperation({ summary: 'End a verification: nothing more is sent or polled for it' })
  @ApiResponse({ status: 200, type: CancelVerificationResponse })
  @ApiProblemResponses(ROUTE_ERROR_CODES.cancel)
  async cancel(
    @Body() body: Readonly<CancelVerificationDto>,
    @Req() request: unknown,
  ): Promise<CancelVerificationResponse> {
    const view = await this.verification.cancel({
      verificationId: body.verification_id,
      journeyToken: body.journey_token,
      owner: await this.owner(request),
      ip: clientIp(request),
      request,
    });
    return CancelVerificationResponse.from(view);
  }

  @Get('status/:verification_id')
  // A status changes from one poll to the next: no browser, proxy or CDN may answer a poll from a copy.
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Follow a verification (poll at poll_interval_ms); resumes after a reload' })
  @ApiParam({ name: 'verification_id' })
  @ApiQuery(JOURNEY_TOKEN_QUERY)
  @ApiResponse({ status: 200, type: VerificationStatusResponse })
  @ApiProblemResponses(ROUTE_ERROR_CODES.status)
  async status(
    @Param('verification_id') verificationId: string,
    @Query('journey_token') journeyToken: unknown,
    @Req() request: unknown,
  ): Promise<VerificationStatusResponse> {
    const owner = await this.owner(request);
    return VerificationStatusResponse.from(
      await this.verification.status(verificationId, owner, journeyTokenOf(journeyToken), {
        request,
        ip: clientIp(request),
      }),
    );
  }

  @Get('status/:verification_id/events')
  @ApiOperation({
    summary:
      'Follow a verification over Server-Sent Events: the status answer on every change, closed at a terminal status',
  })
  @ApiParam({ name: 'verification_id' })
  @ApiQuery(JOURNEY_TOKEN_QUERY)
  @ApiResponse({
    status: 200,
    description: '`event: status` messages whose data is the status answer',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiProblemResponses(ROUTE_ERROR_CODES.statusEvents)
  async statusEvents(
    @Param('verification_id') verificationId: string,
    @Query('journey_token') journeyToken: unknown,
    @Req() request: unknown,
    @Res() response: unknown,
  ): Promise<void> {
    if (!this.options.statusStream.enabled || !this.streams) throw new VerificationClientError('not_found');
    const owner = await this.owner(request);
    await this.streams.open(verificationId, owner, request, response, journeyTokenOf(journeyToken));
  }

  @Get('methods')
  @ApiOperation({
    summary: 'The verification methods this deployment offers (for a purpose: those it allows)',
  })
  @ApiQuery(PURPOSE_QUERY)
  @ApiResponse({ status: 200, type: VerificationMethodsResponse })
  @ApiProblemResponses(ROUTE_ERROR_CODES.methods)
  async methods(@Query('purpose') purpose?: unknown): Promise<VerificationMethodsResponse> {
    // The country lets a frontend read a number typed without `+` as the server will (the element does).
    return VerificationMethodsResponse.from(
      // A repeated or empty `purpose` is no purpose's name: 400 `validation_error`, as on a start.
      await this.verification.methods(purpose as string | undefined),
      this.options.phone.defaultCountry,
    );
  }

  /** Who the caller is, from the host's `owner(req)`. Overridable. */
  protected owner(request: unknown): Promise<string | undefined> {
    return callerOwner(this.options.owner, request);
  }
}

/** A query value that can be a token (one string); anything else is no token. */
function journeyTokenOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= MAX_JOURNEY_TOKEN_CHARS ? value : undefined;
}

/**
 * A controller class serving the client routes under `prefix`; a named registration's class carries its name,
 * so that two registrations' OpenAPI operation ids (class_handler) stay distinct.
 */
export function createVerificationController(
  prefix: string,
  name?: string,
): Type<VerificationControllerBase> {
  @Controller(prefix)
  class VerificationController extends VerificationControllerBase {}
  if (name !== undefined)
    Object.defineProperty(VerificationController, 'name', { value: `VerificationController_${name}` });
  return VerificationController;
}
