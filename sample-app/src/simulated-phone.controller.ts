import { Body, Controller, Get, HttpCode, Param, Post, Query, UseFilters } from '@nestjs/common';
import {
  SandboxControlClient,
  SandboxControlError,
  type SandboxControlActionResult,
} from 'nestjs-phone-verification/testing';
import { DemoProblem, DemoProblemFilter } from './demo-problem.js';
import {
  PHONE_ACTIONS,
  toPhoneScreenItem,
  type PhoneAction,
  type PhoneScreenItem,
} from './simulated-phone.view.js';
import { VerificationTarget } from './verification-target.js';

const E164 = /^\+[1-9]\d{7,14}$/;
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SHOWN_SESSIONS = 4;
const MAX_ADVANCE_MS = 24 * 3_600_000;

/**
 * Sandbox mode only: the end user's phone and the world, for the page's "simulated phone" panel.
 * Proxies the sandbox's control API over HTTP with the package's `SandboxControlClient`, exactly as a
 * separate process would, so the page never needs the sandbox's address; the sandbox's own refusals
 * (for example 409 not_applicable) pass through. In live mode every route is a 404: a real phone plays
 * this part.
 */
@Controller('demo')
@UseFilters(DemoProblemFilter)
export class SimulatedPhoneController {
  private readonly control: SandboxControlClient | undefined;

  constructor(target: VerificationTarget) {
    this.control = target.sandbox && new SandboxControlClient(target.sandbox.url);
  }

  /** What the phone with this number shows, newest first. */
  @Get('phone')
  async screen(
    @Query('number') number: unknown,
  ): Promise<{ phone_number: string; items: PhoneScreenItem[] }> {
    const control = this.sandboxControl();
    if (typeof number !== 'string' || !E164.test(number))
      throw new DemoProblem(
        400,
        'validation_error',
        'number must be an E.164 phone number such as +79123456789',
      );
    const sessions = await passThrough(control.sessionsFor(number));
    return { phone_number: number, items: sessions.slice(0, SHOWN_SESSIONS).map(toPhoneScreenItem) };
  }

  /** The person acts on the phone: the code arrives, they share the number, call, approve or deny. */
  @Post('phone/sessions/:session_id/:action')
  @HttpCode(200)
  async act(
    @Param('session_id') sessionId: string,
    @Param('action') action: string,
  ): Promise<{ result: SandboxControlActionResult['result']; detail: string }> {
    const control = this.sandboxControl();
    if (!SESSION_ID.test(sessionId)) throw new DemoProblem(404, 'not_found', 'No such session on this phone');
    if (!(PHONE_ACTIONS as readonly string[]).includes(action))
      throw new DemoProblem(404, 'not_found', `The phone cannot "${action.slice(0, 20)}"`);
    const { phoneNumber } = await passThrough(control.getSession(sessionId));
    const acted = await passThrough(
      {
        deliver: () => control.deliver(sessionId),
        share: () => control.share(sessionId, phoneNumber),
        call: () => control.call(sessionId, phoneNumber),
        approve: () => control.operator(sessionId, 'approve'),
        deny: () => control.operator(sessionId, 'fail'),
        fallback: () => control.operator(sessionId, 'fallback'),
      }[action as PhoneAction](),
    );
    return { result: acted.result, detail: acted.detail };
  }

  /** Time travel: moves the sandbox's clock (and with it the module's) forward. */
  @Post('sandbox/clock')
  @HttpCode(200)
  async advanceClock(@Body() body: unknown): Promise<{ now: number }> {
    const control = this.sandboxControl();
    const ms = (body as { advance_ms?: unknown } | undefined)?.advance_ms;
    if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 1 || ms > MAX_ADVANCE_MS)
      throw new DemoProblem(400, 'validation_error', 'advance_ms must be an integer from 1 to 86400000');
    return { now: (await passThrough(control.advance(ms))).now };
  }

  private sandboxControl(): SandboxControlClient {
    if (!this.control)
      throw new DemoProblem(404, 'not_found', 'The simulated phone exists only in sandbox mode');
    return this.control;
  }
}

/** The sandbox's own refusal (for example 409 not_applicable, not_pending) as the demo route's problem. */
async function passThrough<T>(request: Promise<T>): Promise<T> {
  try {
    return await request;
  } catch (err) {
    if (err instanceof SandboxControlError)
      throw new DemoProblem(err.status, err.errorCode ?? 'sandbox_error', err.detail);
    throw err;
  }
}
