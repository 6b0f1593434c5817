import {
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  Inject,
  Param,
  Post,
  Req,
  UseFilters,
  UsePipes,
  type Type,
} from '@nestjs/common';
import {
  ApiBody,
  ApiOkResponse,
  ApiCreatedResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiProduces,
} from '@nestjs/swagger';
import { VerificationService } from '../sessions/verification.service.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../verification.constants.js';
import type { ResolvedVerificationOptions } from '../verification.options.js';
import { CheckVerificationDto } from './check-verification.dto.js';
import { clientIp } from './client-request.js';
import { VerificationProblemFilter } from '../verification-problem.filter.js';
import { StartVerificationDto } from './start-verification.dto.js';
import { VerificationValidationPipe } from './validation.pipe.js';
import {
  CheckVerificationResponse,
  StartVerificationResponse,
  VerificationMethodsResponse,
  VerificationStatusResponse,
} from './verification.responses.js';

/**
 * The body routes' validation (start, check), one instance for both. Not on the status route: there it only
 * passed the string parameter through, at the cost of Nest's pipe chain on every poll.
 */
const VALIDATION_PIPE = new VerificationValidationPipe();

/**
 * The frontend-facing routes. The handlers live here; `createVerificationController(prefix)`
 * declares a fresh subclass per registration with its own `@Controller(prefix)`, so the prefix is
 * a static option and no shared class's metadata is ever rewritten at runtime.
 */
@ApiTags('verification')
@ApiProduces('application/json', 'application/problem+json')
@UseFilters(VerificationProblemFilter)
export abstract class VerificationControllerBase {
  constructor(
    protected readonly verification: VerificationService,
    @Inject(RESOLVED_VERIFICATION_OPTIONS) protected readonly options: ResolvedVerificationOptions,
  ) {}

  @Post('start')
  @UsePipes(VALIDATION_PIPE)
  @ApiOperation({ summary: 'Start a verification of a phone number' })
  @ApiBody({ type: StartVerificationDto })
  @ApiCreatedResponse({ type: StartVerificationResponse })
  async start(
    @Body() body: StartVerificationDto,
    @Req() request: unknown,
  ): Promise<StartVerificationResponse> {
    const view = await this.verification.start({
      phoneNumber: body.phone_number,
      method: body.method,
      owner: await this.owner(request),
      ip: clientIp(request),
      request,
    });
    return StartVerificationResponse.from(view);
  }

  @Post('check')
  @UsePipes(VALIDATION_PIPE)
  @HttpCode(200)
  @ApiOperation({ summary: 'Submit the code the user received' })
  @ApiBody({ type: CheckVerificationDto })
  @ApiOkResponse({ type: CheckVerificationResponse })
  async check(
    @Body() body: CheckVerificationDto,
    @Req() request: unknown,
  ): Promise<CheckVerificationResponse> {
    const view = await this.verification.check({
      verificationId: body.verification_id,
      code: body.code,
      owner: await this.owner(request),
      ip: clientIp(request),
      request,
    });
    return CheckVerificationResponse.from(view);
  }

  @Get('status/:verification_id')
  // A status changes from one poll to the next: no browser, proxy or CDN may answer a poll from a copy.
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Follow a verification (poll at poll_interval_ms); resumes after a reload' })
  @ApiParam({ name: 'verification_id' })
  @ApiOkResponse({ type: VerificationStatusResponse })
  async status(
    @Param('verification_id') verificationId: string,
    @Req() request: unknown,
  ): Promise<VerificationStatusResponse> {
    // No owner function and owner() not overridden: the owner is undefined, with no `await` for it.
    const owner =
      this.options.owner === undefined && this.owner === ownerFromOptions
        ? undefined
        : await this.owner(request);
    return VerificationStatusResponse.from(await this.verification.status(verificationId, owner));
  }

  @Get('methods')
  @ApiOperation({ summary: 'The verification methods this deployment offers' })
  @ApiOkResponse({ type: VerificationMethodsResponse })
  async methods(): Promise<VerificationMethodsResponse> {
    return VerificationMethodsResponse.from(await this.verification.methods());
  }

  /** Who the caller is, from the host's `owner(req)`. Overridable. */
  protected async owner(request: unknown): Promise<string | undefined> {
    const owner = await this.options.owner?.(request);
    return owner === undefined || owner === null ? undefined : String(owner);
  }
}

/** The base class's own `owner()`, which only asks `options.owner`. */
const ownerFromOptions = VerificationControllerBase.prototype['owner'];

/** A controller class serving the client routes under `prefix`. */
export function createVerificationController(prefix: string): Type<VerificationControllerBase> {
  @Controller(prefix)
  class VerificationController extends VerificationControllerBase {}
  return VerificationController;
}
