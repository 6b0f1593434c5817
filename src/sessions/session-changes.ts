import { Inject, Injectable } from '@nestjs/common';
import { VerificationLogger } from '../observability/verification-logger.js';
import { LocalChannels } from '../store/local-channels.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { errorText } from '../core/error-text.js';

/** The store channel on which a changed session is announced, by its request id. */
export const SESSION_CHANGED_CHANNEL = 'session-changed';

/**
 * Announces that a session's record changed, to every instance sharing the store, so that the one
 * holding a status stream of it reads the record and pushes the new status. Only the request id
 * travels (never the number or anything else of the record): the holder reads the record itself.
 * A host's own store without publish/subscribe gets an in-process channel: its changes then reach
 * only the streams of the instance that observed them.
 */
@Injectable()
export class SessionChanges {
  private readonly local: LocalChannels | undefined;

  constructor(
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly logger: VerificationLogger,
  ) {
    if (typeof store.publish !== 'function' || typeof store.subscribe !== 'function')
      this.local = new LocalChannels();
  }

  /** Announces a change. Never rejects: a stream that misses it still sees the next change or its end. */
  async announce(requestId: string): Promise<void> {
    if (this.local) return this.local.publish(SESSION_CHANGED_CHANNEL, requestId);
    try {
      await this.store.publish!(SESSION_CHANGED_CHANNEL, requestId);
    } catch (error) {
      this.logger.warn(`could not announce a session change: ${errorText(error)}`);
    }
  }

  /** Calls `listener` with the request id of every change announced from now on. */
  async listen(listener: (requestId: string) => void): Promise<() => void> {
    if (this.local) return this.local.subscribe(SESSION_CHANGED_CHANNEL, listener);
    return this.store.subscribe!(SESSION_CHANGED_CHANNEL, listener);
  }
}
