/** Calling codes of the countries a number typed without `+` is read in (the module's default is RU). */
const CALLING_CODES: Record<string, string> = {
  RU: '7',
  KZ: '7',
  BY: '375',
  UZ: '998',
  AM: '374',
  KG: '996',
};

/**
 * The digits of a number in international form (no `+`), a national one read in `country`
 * (for +7, the trunk prefix 8 becomes 7). The server validates; this only helps the typing.
 */
export function phoneDigits(value: string, country: string): string {
  let digits = value.replace(/\D/g, '');
  const code = CALLING_CODES[country.toUpperCase()] ?? '';
  if (digits && !value.trim().startsWith('+')) {
    if (code === '7' && digits[0] === '8') digits = '7' + digits.slice(1);
    else if (!digits.startsWith(code)) digits = code + digits;
  }
  return digits.slice(0, 15);
}

/** As typed: `+7 912 345-67-89` for +7 numbers, `+` and the digits otherwise; masked numbers as they are. */
export function formatPhone(value: string, country: string): string {
  if (value.includes('*')) return value;
  const digits = phoneDigits(value, country);
  if (!digits) return '';
  if (digits[0] !== '7') return '+' + digits;
  const n = digits.slice(1, 11);
  return (
    '+7' +
    (n ? ' ' + n.slice(0, 3) : '') +
    (n.length > 3 ? ' ' + n.slice(3, 6) : '') +
    (n.length > 6 ? '-' + n.slice(6, 8) : '') +
    (n.length > 8 ? '-' + n.slice(8, 10) : '')
  );
}
