/** The ledger's store keys, named in this one place. No key names a number or a person. */
export const LedgerKeys = {
  /** A day's count of rows, the atomic counter that hands out row slots. */
  rows: (day: string) => `ledger:${day}:rows`,
  /** The row held in a day's slot `n` (1-based). */
  slot: (day: string, n: number) => `ledger:${day}:slot:${n}`,
  /** Claimed by the instance that gives a row its slot. */
  rowClaim: (day: string, row: string) => `ledger:${day}:row:${row}`,
  /** One figure of a row: an integer counter. */
  figure: (day: string, row: string, field: string) => `ledger:${day}:${row}:${field}`,
  /** The currency of a day's charges. */
  currency: (day: string) => `ledger:${day}:currency`,
  /** A session's transition counted (once across instances). */
  counted: (requestId: string, transition: string) => `ledger-counted:{${requestId}}:${transition}`,
  /** Every charge the ledger counted, ever (minor units): what the balance should have lost. */
  chargedTotal: 'ledger:charged-total',
  /** The balance reading the next one is compared with. */
  balance: 'ledger:balance',
  /** The last `GET /v1/usage` reading of a day. */
  usage: (day: string) => `ledger:${day}:usage`,
  /** At most one usage read per day and interval across instances. */
  usageRead: (day: string) => `ledger:${day}:usage-read`,
  /** A drift's event, claimed once per figure. */
  drift: (source: string, day: string, minor: number) => `ledger:${day}:drift:${source}:${minor}`,
} as const;
