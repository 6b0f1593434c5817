import type { LedgerDayReport, LedgerRow } from '../ledger/ledger-report.js';
import { OPS_TEXTS, type OpsLanguage, type OpsTexts } from './ops-page.texts.js';

/** What the page shows: figures only, never a number, an owner or a secret. */
export interface OpsPageData {
  date: string;
  /** null: the ledger is off. */
  ledger: LedgerDayReport | null;
  /** Operational events of the last day, by name. */
  incidents: { event: string; count: number }[];
  /** Per method over the last day: sessions started and the share verified. */
  health: { method: string; started: number; verifiedRate: number | null }[];
}

/** Rows of the funnel table shown at most (the busiest); the rest are summed in the charts and the CSV. */
export const SHOWN_ROWS = 50;

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;color:#111;background:#fff;margin:0 auto;max-width:60rem;padding:1rem}' +
  'table{border-collapse:collapse;margin:.5rem 0 1.5rem}th,td{border:1px solid #767676;padding:.25rem .5rem;text-align:left}' +
  'td.n{text-align:right}caption{text-align:left;font-weight:600}svg{display:block;margin:.5rem 0}' +
  '.beyond{color:#a50e0e;font-weight:600}nav a{margin-right:1rem;color:#0b57d0}';
const BAR_COLORS = ['#1f4e79', '#1b5e20', '#4a148c'] as const;

/** The page as one HTML document: inline style and SVG, no script. */
export function renderOpsPage(data: OpsPageData, lang: OpsLanguage): string {
  const t = OPS_TEXTS[lang];
  const other: OpsLanguage = lang === 'en' ? 'ru' : 'en';
  const body = [
    `<header><h1>${esc(t.title)}</h1><p>${esc(t.day)}: <time datetime="${esc(data.date)}">${esc(data.date)}</time></p>`,
    `<nav aria-label="${esc(t.language)}"><a href="?lang=${other}&amp;date=${esc(data.date)}" lang="${other}" hreflang="${other}">${other === 'ru' ? 'Русский' : 'English'}</a></nav></header>`,
    '<main>',
    data.ledger
      ? funnelSection(data.ledger, t) + ledgerSection(data.ledger, t)
      : `<p>${esc(t.ledgerOff)}</p>`,
    incidentsSection(data, t),
    healthSection(data, t),
    '</main>',
  ].join('');
  return (
    `<!doctype html><html lang="${lang}"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(t.title)}</title>` +
    `<style>${STYLE}</style></head><body>${body}</body></html>`
  );
}

function funnelSection(ledger: LedgerDayReport, t: OpsTexts): string {
  const byMethod = new Map<string, [number, number, number]>();
  for (const row of ledger.rows) {
    const sums = byMethod.get(row.method) ?? [0, 0, 0];
    byMethod.set(row.method, [sums[0] + row.started, sums[1] + row.delivered, sums[2] + row.verified]);
  }
  const charts = [...byMethod].map(([method, sums], i) => funnelChart(method, sums, t, i)).join('');
  const shown = [...ledger.rows].sort((a, b) => b.started - a.started).slice(0, SHOWN_ROWS);
  const head = [t.method, t.prefix, t.started, t.delivered, t.verified, t.costPerVerified];
  const rows = shown.map(
    (r: LedgerRow) =>
      [r.method, r.prefix].map(cell).join('') +
      [r.started, r.delivered, r.verified].map(num).join('') +
      num(r.costPerVerified),
  );
  return (
    `<section aria-labelledby="funnel"><h2 id="funnel">${esc(t.funnel)}</h2>${charts}` +
    table(t.funnel, head, rows) +
    `<p>${esc(t.costPerVerified)}: ${esc(money(ledger.totals.costPerVerified, ledger.currency))}</p></section>`
  );
}

/** Three horizontal bars (started, delivered, verified), scaled to `started`. */
function funnelChart(
  method: string,
  [started, delivered, verified]: [number, number, number],
  t: OpsTexts,
  i: number,
): string {
  const id = `chart-${i}`;
  const labels = [t.started, t.delivered, t.verified];
  const values = [started, delivered, verified];
  const width = 300;
  const bars = values
    .map((value, k) => {
      const w = started > 0 ? Math.round((value / started) * width) : 0;
      const y = k * 28;
      return (
        `<text x="0" y="${y + 17}" fill="#111">${esc(labels[k]!)}</text>` +
        `<rect x="130" y="${y + 4}" width="${w}" height="18" fill="${BAR_COLORS[k]}"></rect>` +
        `<text x="${136 + w}" y="${y + 17}" fill="#111">${value}</text>`
      );
    })
    .join('');
  return (
    `<svg role="img" aria-labelledby="${id}" width="500" height="90" viewBox="0 0 500 90">` +
    `<title id="${id}">${esc(t.funnelChart(method))}: ${values.join(' / ')}</title>${bars}</svg>`
  );
}

function ledgerSection(ledger: LedgerDayReport, t: OpsTexts): string {
  const drift =
    ledger.drift === null
      ? esc(t.notRead)
      : `<span class="${ledger.beyondTolerance ? 'beyond' : ''}">${esc(money(ledger.drift, ledger.currency))} ` +
        `(${esc(ledger.beyondTolerance ? t.driftBeyond : t.driftWithin)})</span>`;
  return (
    `<section aria-labelledby="ledger"><h2 id="ledger">${esc(t.ledger)}</h2><dl>` +
    `<dt>${esc(t.expected)}</dt><dd>${esc(money(ledger.totals.expected, ledger.currency))}</dd>` +
    `<dt>${esc(t.charged)}</dt><dd>${ledger.usage ? esc(money(ledger.usage.charged, ledger.currency)) : esc(t.notRead)}</dd>` +
    `<dt>${esc(t.drift)}</dt><dd>${drift}</dd></dl></section>`
  );
}

function incidentsSection(data: OpsPageData, t: OpsTexts): string {
  const rows = data.incidents.map((i) => cell(i.event) + num(i.count));
  return (
    `<section aria-labelledby="incidents"><h2 id="incidents">${esc(t.incidents)}</h2>` +
    (rows.length === 0 ? `<p>${esc(t.none)}</p>` : table(t.incidents, [t.incident, t.count], rows)) +
    '</section>'
  );
}

function healthSection(data: OpsPageData, t: OpsTexts): string {
  const rows = data.health.map(
    (h) =>
      cell(h.method) +
      num(h.started) +
      num(h.verifiedRate === null ? null : Math.round(h.verifiedRate * 1000) / 10),
  );
  return (
    `<section aria-labelledby="health"><h2 id="health">${esc(t.health)}</h2>` +
    (rows.length === 0
      ? `<p>${esc(t.none)}</p>`
      : table(t.health, [t.method, t.started, `${t.verifiedRate}, %`], rows)) +
    '</section>'
  );
}

function table(caption: string, head: string[], rows: string[]): string {
  return (
    `<table><caption>${esc(caption)}</caption><thead><tr>${head.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead>` +
    `<tbody>${rows.map((r) => `<tr>${r}</tr>`).join('')}</tbody></table>`
  );
}

function cell(text: string): string {
  return `<td>${esc(text)}</td>`;
}

function num(value: number | null): string {
  return `<td class="n">${value === null ? '–' : esc(String(value))}</td>`;
}

function money(amount: number | null, currency: string): string {
  return amount === null ? '–' : `${amount} ${currency}`;
}

/** Text as HTML: the five characters that could end an element or an attribute, escaped. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
