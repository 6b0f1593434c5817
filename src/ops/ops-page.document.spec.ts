/**
 * The ops page as its reader gets it, to the character: a day with figures in English and one without a
 * verified session (usage not read yet) in Russian, and the page of an off ledger in both. The documents
 * are in test/ops/pages/ (open them in a browser to review a change; `PV_WRITE_PAGES=1` rewrites them
 * after a deliberate change, and the diff is reviewed like code).
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { figuresOf, type LedgerDayReport } from '../ledger/ledger-report.js';
import type { OpsLanguage } from './ops-page.texts.js';
import { renderOpsPage, type OpsPageData } from './ops-page.view.js';

const PAGES = join(import.meta.dirname, '../../test/ops/pages');

const row = (
  method: string,
  prefix: string,
  started: number,
  delivered: number,
  verified: number,
  charged: number,
) => ({
  method,
  prefix,
  ...figuresOf({ started, delivered, verified, expired: started - verified, failed: 0, charged }),
});

const DAY: LedgerDayReport = {
  date: '2026-03-15',
  currency: 'RUB',
  final: false,
  rows: [row('reverse_flash_call', '+7903', 2, 0, 0, 25), row('sms', '+7912', 4, 3, 2, 900)],
  totals: figuresOf({ started: 6, delivered: 3, verified: 2, expired: 4, failed: 0, charged: 925 }),
  usage: { charged: 9.5, verifications: 6, verified: 2, readAt: new Date(Date.UTC(2026, 2, 15, 12)) },
  drift: 0.25,
  tolerance: 1,
  beyondTolerance: false,
};

const UNVERIFIED: LedgerDayReport = {
  ...DAY,
  rows: [row('msgr2_bot', '+7985', 3, 1, 0, 100)],
  totals: figuresOf({ started: 3, delivered: 1, verified: 0, expired: 3, failed: 0, charged: 100 }),
  usage: null,
  drift: null,
};

const CASES: [string, OpsLanguage, OpsPageData][] = [
  [
    'day.en.html',
    'en',
    {
      date: '2026-03-15',
      ledger: DAY,
      incidents: [{ event: 'verification.fraud_suspected', count: 2 }],
      health: [
        { method: 'sms', started: 4, verifiedRate: 0.5 },
        { method: 'reverse_flash_call', started: 2, verifiedRate: null },
      ],
    },
  ],
  [
    'unverified.ru.html',
    'ru',
    {
      date: '2026-03-15',
      ledger: UNVERIFIED,
      incidents: [{ event: 'verification.balance_low', count: 1 }],
      health: [{ method: 'msgr2_bot', started: 3, verifiedRate: 0 }],
    },
  ],
  ['off.en.html', 'en', { date: '2026-03-15', ledger: null, incidents: [], health: [] }],
  ['off.ru.html', 'ru', { date: '2026-03-15', ledger: null, incidents: [], health: [] }],
];

describe('the ops page, to the character', () => {
  it.each(CASES)('%s', (file, lang, data) => {
    const html = renderOpsPage(data, lang);
    if (process.env.PV_WRITE_PAGES === '1') writeFileSync(join(PAGES, file), html + '\n');
    expect(html + '\n').toBe(readFileSync(join(PAGES, file), 'utf8'));
  });
});
