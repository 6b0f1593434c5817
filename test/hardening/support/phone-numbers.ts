/** Mobile ranges libphonenumber files under RU (so the module accepts them). */
const RU_MOBILE_PREFIXES = [
  '912',
  '915',
  '916',
  '917',
  '926',
  '903',
  '905',
  '906',
  '909',
  '999',
  '985',
  '977',
];

/** Unique Russian mobile numbers, one per call (120 million before they repeat). */
export class PhoneNumbers {
  private next: number;
  constructor(base = Math.floor(Math.random() * 5_000_000)) {
    this.next = base;
  }
  take(): string {
    const n = this.next++;
    const prefix = RU_MOBILE_PREFIXES[Math.floor(n / 10_000_000) % RU_MOBILE_PREFIXES.length];
    return `+7${prefix}${String(n % 10_000_000).padStart(7, '0')}`;
  }
}
