/** `+79123456789` → `+7******6789`: the host's screens show who, without the whole number. */
export function maskPhoneNumber(e164: string): string {
  if (e164.length <= 6) return e164;
  return `${e164.slice(0, 2)}${'*'.repeat(e164.length - 6)}${e164.slice(-4)}`;
}
