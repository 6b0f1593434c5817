import { Controller, Get, Header, Sse, UseFilters, type MessageEvent } from '@nestjs/common';
import { map, type Observable } from 'rxjs';
import { DemoProblemFilter } from './demo-problem.js';
import { DemoUserAccount, type VerifiedNumber } from './demo-user-account.service.js';
import { HostEventLog } from './host-event-log.service.js';
import { VerificationTarget, type SampleMode } from './verification-target.js';

/** The host side as the page shows it: the mode, the demo user's account and the events received. */
@Controller('demo')
@UseFilters(DemoProblemFilter)
export class DemoHostController {
  constructor(
    private readonly target: VerificationTarget,
    private readonly account: DemoUserAccount,
    private readonly log: HostEventLog,
  ) {}

  /** `now` is the clock the module runs on, so that the page's countdowns agree with it. */
  @Get('info')
  @Header('Cache-Control', 'no-store')
  info(): { mode: SampleMode; now: number } {
    return { mode: this.target.mode, now: this.target.now() };
  }

  @Get('account')
  @Header('Cache-Control', 'no-store')
  verifiedNumbers(): { verified_numbers: VerifiedNumber[] } {
    return { verified_numbers: this.account.verifiedNumbers() };
  }

  /** Server-sent events: the last events the host received, then each new one as it arrives. */
  @Sse('events')
  events(): Observable<MessageEvent> {
    return this.log
      .stream()
      .pipe(map((entry) => ({ id: String(entry.id), type: 'host-event', data: entry })));
  }
}
