import { Injectable } from '@nestjs/common';
import { ReplaySubject, type Observable } from 'rxjs';
import type { VerificationEvent } from 'nestjs-phone-verification';
import { maskPhoneNumber } from './mask-phone-number.js';

/** One event as the page's "events the host received" section shows it. */
export interface HostEventEntry {
  id: number;
  /** When the host received it (the host's clock). */
  received_at: string;
  event: string;
  phone_number: string;
  method: string;
  status: string;
  /** Where the module learned it: webhook, poll or check. */
  source: string;
  /** What the host's listener did with it. */
  handled_by: string;
}

const KEPT_ENTRIES = 100;

/** The verification events this host received, in memory, replayed to every new page (SSE). */
@Injectable()
export class HostEventLog {
  private readonly entries = new ReplaySubject<HostEventEntry>(KEPT_ENTRIES);
  private nextId = 1;

  record(event: VerificationEvent, receivedAt: number, handledBy: string): HostEventEntry {
    const entry: HostEventEntry = {
      id: this.nextId++,
      received_at: new Date(receivedAt).toISOString(),
      event: event.event,
      phone_number: maskPhoneNumber(event.phoneNumber),
      method: event.method,
      status: event.status,
      source: event.source,
      handled_by: handledBy,
    };
    this.entries.next(entry);
    return entry;
  }

  /** The last entries, then every new one. */
  stream(): Observable<HostEventEntry> {
    return this.entries.asObservable();
  }
}
