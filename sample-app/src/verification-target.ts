import type { VerificationSandbox } from 'nestjs-phone-verification/testing';

export type SampleMode = 'sandbox' | 'live';

/**
 * The verification API this sample talks to: the embedded sandbox (no credentials in the
 * environment) or the real service. Created before VerificationModule, which reads it in its
 * options factory.
 */
export class VerificationTarget {
  private constructor(
    readonly mode: SampleMode,
    /** Only in sandbox mode. */
    readonly sandbox: VerificationSandbox | undefined,
  ) {}

  static embedded(sandbox: VerificationSandbox): VerificationTarget {
    return new VerificationTarget('sandbox', sandbox);
  }

  /** The real API, whose settings VerificationModule's factory reads from the configuration. */
  static live(): VerificationTarget {
    return new VerificationTarget('live', undefined);
  }

  /** The clock the module runs on: the sandbox's (so its time travel moves expiry and limits too), or real time. */
  now(): number {
    return this.sandbox ? this.sandbox.now() : Date.now();
  }
}
