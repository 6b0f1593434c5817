import { browser } from './transport.js';

/**
 * WebOTP: the browser offers the code of an incoming SMS (formatted for this origin) without
 * typing. Resolves with the code, or null when the browser lacks it or the request was aborted.
 */
export async function receiveSmsCode(signal: AbortSignal): Promise<string | null> {
  const credentials = browser.navigator?.credentials;
  if (!browser.OTPCredential || !credentials) return null;
  try {
    const credential = (await credentials.get({ otp: { transport: ['sms'] }, signal })) as {
      code?: unknown;
    } | null;
    return typeof credential?.code === 'string' ? credential.code : null;
  } catch {
    return null;
  }
}

/** Runs WebOTP while it is wanted, handing each code it receives on; aborted once it no longer is. */
export class WebOtpWatcher {
  private running: AbortController | null = null;

  constructor(private readonly onCode: (code: string) => void) {}

  watch(wanted: boolean): void {
    if (wanted && !this.running) {
      const otp = (this.running = new AbortController());
      void receiveSmsCode(otp.signal).then((code) => {
        if (code && this.running === otp) this.onCode(code);
      });
    } else if (!wanted && this.running) {
      this.running.abort();
      this.running = null;
    }
  }
}
