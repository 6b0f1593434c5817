/**
 * TestNumberApiClient's real start: its bot link gives test sessions' links their shape, and the start answers
 * once that shape is kept, so a test start right after it (a reviewer's, on a store slower to write than to
 * answer) is handed a link of the real bot's shape, not the one that opens nothing.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { MemoryStore } from '../store/memory.store.js';
import { DEEP_LINK_TEMPLATE_KEY, TEST_DEEP_LINK } from './test-deep-link.js';
import { TestNumberApiClient } from './test-number-api.client.js';
import { TestNumberSessions } from './test-number-sessions.js';

const TEST = '+79990000003';
const options = resolveVerificationOptions({
  api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
  methods: ['sms', 'msgr2_bot'],
  testNumbers: { numbers: [{ phoneNumber: TEST, code: '123456' }] },
});

/** A store whose write of the link's shape lands 200 ms after it is asked for (a far or busy Redis). */
class SlowWrites extends MemoryStore {
  override async set(...args: Parameters<MemoryStore['set']>): Promise<void> {
    if (args[0] === DEEP_LINK_TEMPLATE_KEY) await new Promise((resolve) => setTimeout(resolve, 200));
    return super.set(...args);
  }
}

describe('TestNumberApiClient: a real bot start', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it("answers once its link's shape is kept: a test start right after it gets a link of the real bot's shape", async () => {
    const real = 'https://msgr2.example/sandbox_verify_bot?start=0a9fB7Zq-x';
    jest.spyOn(VerificationApiClient.prototype, 'initiate').mockResolvedValue({
      requestId: 'real-1',
      method: 'msgr2_bot',
      deepLink: real,
    } as never);
    const store = new SlowWrites();
    const client = new TestNumberApiClient(options.api as never, new TestNumberSessions(options, store));
    await client.initiate({ phoneNumber: '+79123456789', method: 'msgr2_bot' });
    const played = (await client.play({ phoneNumber: TEST, method: 'msgr2_bot' })) as { deepLink?: string };
    expect(played.deepLink).not.toBe(TEST_DEEP_LINK);
    expect(played.deepLink).toMatch(/^https:\/\/msgr2\.example\/sandbox_verify_bot\?start=[\w-]{10}$/);
    await store.close?.();
  });
});
