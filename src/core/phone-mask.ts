/** `+79123454567` → `+7******4567`: keeps the calling code's first digit and the last four. */
export function maskPhoneNumber(e164: string): string {
  if (e164.length <= 6) return '*'.repeat(e164.length);
  return `${e164.slice(0, 2)}${'*'.repeat(e164.length - 6)}${e164.slice(-4)}`;
}
