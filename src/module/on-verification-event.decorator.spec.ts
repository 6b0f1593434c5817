import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { OnVerificationEvent } from './on-verification-event.decorator.js';

/** A host's listeners that fail: one as the README writes them, one that asks for its errors to be kept quiet. */
@Injectable()
class FailingListeners {
  readonly heard: string[] = [];

  @OnVerificationEvent('verified')
  onVerified(): void {
    this.heard.push('verified');
    throw new Error('listener storage down');
  }

  @OnVerificationEvent('failed', { suppressErrors: true })
  onFailed(): void {
    this.heard.push('failed');
    throw new Error('listener storage down');
  }
}

describe('@OnVerificationEvent', () => {
  it("listens to verification.<event>; a listener's error reaches the emitter unless the host asked to suppress it", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [EventEmitterModule.forRoot()],
      providers: [FailingListeners],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const emitter = app.get(EventEmitter2);
      // By default the error is the emitter's (the module releases its claim: delivered again).
      await expect(emitter.emitAsync('verification.verified', {})).rejects.toThrow('listener storage down');
      // An explicit `suppressErrors: true` is the host's choice, kept.
      await expect(emitter.emitAsync('verification.failed', {})).resolves.toBeDefined();
      expect(app.get(FailingListeners).heard).toEqual(['verified', 'failed']);
    } finally {
      await app.close();
    }
  });
});
