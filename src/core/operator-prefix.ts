import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * The national destination code of an E.164 number (`985` for +7 985 …), as the international format's
 * first group gives it (the pumping defence's operator prefix, protection/pumping-counts.ts, without its
 * calling code); empty when the format has no such group or the number does not parse.
 */
export function nationalDestinationCode(e164: string): string {
  const known = ndcByHead.get(e164.slice(0, HEAD_LENGTH));
  if (known !== undefined) return known;
  let ndc: string;
  try {
    const groups = parsePhoneNumberFromString(e164)?.formatInternational().split(' ') ?? [];
    ndc = groups.length > 2 ? groups[1]!.replace(/\D/g, '') : '';
  } catch {
    ndc = '';
  }
  // Codes found so far by the number's first digits: a number is parsed once per head, not per count.
  if (ndcByHead.size >= HEADS_REMEMBERED) ndcByHead.clear();
  if (/^\+\d{6}/.test(e164)) ndcByHead.set(e164.slice(0, HEAD_LENGTH), ndc);
  return ndc;
}

/** `+`, a calling code and a destination code fit in the first 8 characters for most plans (+7 985, +49 1512). */
const HEAD_LENGTH = 8;
const HEADS_REMEMBERED = 10_000;
const ndcByHead = new Map<string, string>();
