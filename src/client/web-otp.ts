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
