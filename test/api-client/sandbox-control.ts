import {
  VerificationApiClient,
  type ApiTransport,
  type VerificationApiClientOptions,
} from '../../src/index.js';
import type { SandboxSessionView, VerificationSandbox } from '../../src/testing/index.js';

let counter = 0;
/** A distinct valid Russian mobile number per call, so tests never share a phone. */
export function nextPhone(): string {
  counter += 1;
  return `+7912${String(process.pid % 1000).padStart(3, '0')}${String(counter).padStart(4, '0')}`;
}

/** The sandbox's internal view of a session the test just created (code, numbers, attempts). */
export function issued(sb: VerificationSandbox, requestId: string): SandboxSessionView {
  const session = sb.getSession(requestId);
  if (!session) throw new Error(`the sandbox has no session ${requestId}`);
  return session;
}

/** The code the user received; fails the test when the session has none. */
export function issuedCode(sb: VerificationSandbox, requestId: string): string {
  const { code } = issued(sb, requestId);
  if (code === null) throw new Error(`session ${requestId} has no code`);
  return code;
}

/** Every way the client can send: every transport suite runs over each. */
export const API_TRANSPORTS: ApiTransport[] = ['undici', 'axios'];

/** What a call that must fail rejects with; the test fails if it resolves. */
export function rejection<T>(promise: Promise<T>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
}

/** The API clients one suite makes, each closed by `closeAll()` in its `afterAll`. */
export class SuiteClients {
  private readonly made: VerificationApiClient[] = [];

  create(options: VerificationApiClientOptions): VerificationApiClient {
    const client = VerificationApiClient.create(options);
    this.made.push(client);
    return client;
  }

  closeAll(): void {
    for (const client of this.made.splice(0)) client.close();
  }
}
