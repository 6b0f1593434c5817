import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * A number's operator: its national destination code (`985` for +7 985 …), as the international format's
 * first group after the calling code gives it (libphonenumber's own way to find it), and its operator prefix,
 * `+`, the calling code and that code (`+7985`): what the pumping defence counts, the method figures and
 * health are kept by and the ledger's rows are per. The rule is here only.
 */
interface Operator {
  /** Empty when the format has no such group or the number does not parse. */
  ndc: string;
  /** `+` and the calling code alone without a destination code; `+` and the first digit when it does not parse. */
  prefix: string;
}

/** `+`, a calling code and a destination code fit in the first 8 characters for most plans (+7 985, +49 1512). */
const HEAD_LENGTH = 8;
const HEADS_REMEMBERED = 10_000;
/**
 * Operators found so far by a valid number's head and length: a number is parsed once per head, not per count.
 * The length too: a plan's numbers of one head but two lengths group apart (Estonia's mobiles: +372 5153 8392,
 * +372 515 3357).
 */
const byHead = new Map<string, Operator>();

function operatorOf(e164: string): Operator {
  const head = `${e164.slice(0, HEAD_LENGTH)}:${e164.length}`;
  const known = byHead.get(head);
  if (known !== undefined) return known;
  let parsed: ReturnType<typeof parsePhoneNumberFromString>;
  try {
    parsed = parsePhoneNumberFromString(e164);
  } catch {
    parsed = undefined;
  }
  if (!parsed) return { ndc: '', prefix: e164.slice(0, 2) };
  const groups = parsed.formatInternational().split(' ');
  const ndc = groups.length > 2 ? groups[1]!.replace(/\D/g, '') : '';
  const operator = { ndc, prefix: `+${parsed.countryCallingCode}${ndc}` };
  // Only a valid number's: a too short or too long one formats without its groups, and would answer for
  // every number of its head. Only a prefix within the head: one that runs past it (+976 15489 …) is not the
  // answer for the numbers of its head (+976 15480 …).
  const fits = operator.prefix.length <= HEAD_LENGTH && e164.startsWith(operator.prefix);
  if (parsed.isValid() && e164.length >= HEAD_LENGTH && fits) {
    if (byHead.size >= HEADS_REMEMBERED) byHead.clear();
    byHead.set(head, operator);
  }
  return operator;
}

/** The national destination code of an E.164 number (`985` for +7 985 …); see Operator. */
export function nationalDestinationCode(e164: string): string {
  return operatorOf(e164).ndc;
}

/** The operator prefix of an E.164 number (`+7985`); see Operator. */
export function operatorPrefixOf(e164: string): string {
  return operatorOf(e164).prefix;
}
