import { describe, expect, it } from '@jest/globals';
import { figuresOf, type LedgerDayReport } from '../ledger/ledger-report.js';
import { esc, renderOpsPage, SHOWN_ROWS, type OpsPageData } from './ops-page.view.js';
import { OPS_LANGUAGES, OPS_TEXTS } from './ops-page.texts.js';

const counts = (started: number) => ({
  started,
  delivered: started,
  verified: 1,
  expired: 0,
  failed: 0,
  charged: 300,
});

function day(rows: number, overrides: Partial<LedgerDayReport> = {}): LedgerDayReport {
  return {
    date: '2026-03-15',
    currency: 'RUB',
    final: false,
    rows: Array.from({ length: rows }, (_, i) => ({
      method: 'sms',
      prefix: `+7${900 + i}`,
      ...figuresOf(counts(i + 1)),
    })),
    totals: figuresOf(counts(rows)),
    usage: null,
    drift: null,
    tolerance: 1,
    beyondTolerance: false,
    ...overrides,
  };
}

const data = (ledger: LedgerDayReport | null, more: Partial<OpsPageData> = {}): OpsPageData => ({
  date: '2026-03-15',
  ledger,
  incidents: [],
  health: [],
  ...more,
});

describe('the ops page view', () => {
  it('escapes every text it is given', () => {
    expect(esc(`<a href="x">'&'</a>`)).toBe('&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;');
    const html = renderOpsPage(
      data(day(1, { rows: [{ method: '<script>', prefix: '"x', ...figuresOf(counts(1)) }] }), {
        incidents: [{ event: '<b>', count: 2 }],
        health: [{ method: '<i>', started: 1, verifiedRate: null }],
      }),
      'en',
    );
    expect(html).not.toMatch(/<script>|<b>|<i>|"x/);
  });

  it('a big day shows its busiest rows only, the funnel chart summing them all', () => {
    const html = renderOpsPage(data(day(SHOWN_ROWS + 5)), 'en');
    expect(html.match(/<tr><td>sms<\/td>/g)).toHaveLength(SHOWN_ROWS);
    expect(html).toContain(`<td>+7${900 + SHOWN_ROWS + 4}</td>`);
    expect(html).not.toContain('<td>+7900</td>');
    const started = ((SHOWN_ROWS + 5) * (SHOWN_ROWS + 6)) / 2;
    expect(html).toContain(`Funnel of sms: ${started} / ${started} / ${SHOWN_ROWS + 5}`);
  });

  it('bars are as long as their share of the starts; none with no start', () => {
    const html = renderOpsPage(
      data(
        day(1, { rows: [{ method: 'sms', prefix: '+7912', ...figuresOf({ ...counts(4), delivered: 2 }) }] }),
      ),
      'en',
    );
    expect(html).toContain('width="300" height="18" fill="#1f4e79"');
    expect(html).toContain('width="150" height="18" fill="#1b5e20"');
    expect(html).toContain('width="75" height="18" fill="#4a148c"');
    const empty = renderOpsPage(
      data(
        day(1, { rows: [{ method: 'sms', prefix: '+7912', ...figuresOf({ ...counts(0), verified: 0 }) }] }),
      ),
      'en',
    );
    expect(empty).toContain('width="0" height="18" fill="#1f4e79"');
  });

  it('says when the ledger is off or the usage not read, a drift within or beyond, and no incidents', () => {
    expect(renderOpsPage(data(null), 'ru')).toContain('Учёт расходов выключен');
    const unread = renderOpsPage(data(day(1)), 'en');
    expect(unread).toContain('<dt>Drift</dt><dd>not read yet</dd>');
    expect(unread).toContain('<h2 id="incidents">Holds and attacks, last day</h2><p>None</p>');
    const within = renderOpsPage(
      data(
        day(1, { drift: 0.5, usage: { charged: 3.5, verifications: 1, verified: 1, readAt: new Date(0) } }),
      ),
      'en',
    );
    expect(within).toContain('<span class="">0.5 RUB (within the tolerance)</span>');
    expect(within).toContain('<dt>Charged by the API</dt><dd>3.5 RUB</dd>');
    const beyond = renderOpsPage(data(day(1, { drift: -2, beyondTolerance: true })), 'en');
    expect(beyond).toContain('<span class="beyond">-2 RUB (beyond the tolerance)</span>');
  });

  it('a drift beyond the tolerance stands out whichever way it goes; one within does not, either way', () => {
    const usage = { charged: 3.5, verifications: 1, verified: 1, readAt: new Date(0) };
    const drift = (lang: 'en' | 'ru', value: number, beyondTolerance: boolean) =>
      renderOpsPage(data(day(1, { usage, drift: value, beyondTolerance })), lang).match(
        /<dt>[^<]*<\/dt><dd>(<span[^]*?<\/span>)<\/dd><\/dl>/,
      )?.[1];
    expect(drift('en', 2, true)).toBe('<span class="beyond">2 RUB (beyond the tolerance)</span>');
    expect(drift('en', -0.5, false)).toBe('<span class="">-0.5 RUB (within the tolerance)</span>');
    expect(drift('ru', 2, true)).toBe('<span class="beyond">2 RUB (сверх допуска)</span>');
    expect(drift('ru', -0.5, false)).toBe('<span class="">-0.5 RUB (в пределах допуска)</span>');
  });

  it('method health as a percentage, and a link to the other language', () => {
    const html = renderOpsPage(
      data(null, { health: [{ method: 'sms', started: 3, verifiedRate: 2 / 3 }] }),
      'en',
    );
    expect(html).toContain('<td>sms</td><td class="n">3</td><td class="n">66.7</td>');
    expect(html).toContain('<a href="?lang=ru&amp;date=2026-03-15" lang="ru" hreflang="ru">Русский</a>');
    expect(renderOpsPage(data(null), 'ru')).toContain('hreflang="en">English</a>');
  });

  it.each(OPS_LANGUAGES)('says each of its words in %s, where its part of the page shows', (lang) => {
    const usage = { charged: 3.5, verifications: 1, verified: 1, readAt: new Date(0) };
    const pages = [
      renderOpsPage(data(null), lang),
      renderOpsPage(data(day(1)), lang),
      renderOpsPage(data(day(1, { drift: 0.5, usage })), lang),
      renderOpsPage(
        data(day(1, { drift: -2, beyondTolerance: true, usage }), {
          incidents: [{ event: 'verification.fraud_suspected', count: 2 }],
          health: [{ method: 'sms', started: 3, verifiedRate: 0.5 }],
        }),
        lang,
      ),
    ].join('\n');
    for (const [key, text] of Object.entries(OPS_TEXTS[lang])) {
      const said = typeof text === 'function' ? text('sms') : text;
      expect([key, said.trim().length > 0, pages.includes(esc(said))]).toStrictEqual([key, true, true]);
    }
    // The drift beyond the tolerance stands out (the page's own style sheet marks it).
    expect(pages).toMatch(/<style>[^<]*\.beyond\{color:#a50e0e;font-weight:600\}/);
  });
});
