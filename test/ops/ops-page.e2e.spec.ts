/**
 * The ops page a host mounts behind its own guard, on Express and Fastify: unreachable without the
 * guard, a sandbox day's figures on it (funnel, cost per verified user, drift, incidents, method
 * health), no number on it, bad queries refused naming the field, the CSV export, and a boot error for
 * a page without guards. In Chromium, axe finds nothing in English or Russian.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Browser } from 'playwright-core';
import { createVerificationOpsController } from '../../src/ops/verification-ops.controller.js';
import { VerificationLedger } from '../../src/ledger/verification-ledger.service.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { launchChromium } from '../support/chromium.js';
import { call, createTestApp, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { moduleOptions, sendCode, settle, startSession, type StartedSession } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The host's own guard: an admin header (a real host checks its session). */
@Injectable()
class AdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers['x-admin'] === 'yes';
  }
}

const OpsController = createVerificationOpsController({ path: 'admin/verification', guards: [AdminGuard] });
const ADMIN = { 'x-admin': 'yes' };

async function hostWithPage(sb: VerificationSandbox, platform: 'express' | 'fastify'): Promise<TestApp> {
  const host = await createTestApp({
    platform,
    module: moduleOptions(sb, { ledger: {} }),
    controllers: [OpsController],
  });
  await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${host.url}/verification/webhooks` });
  return host;
}

/** A small day: an SMS verified, an SMS expired undelivered, a reverse call verified; one recalculated. */
async function playDay(sb: VerificationSandbox, host: TestApp): Promise<StartedSession[]> {
  const sms = await startSession(host, sb, 'sms', 'owner-1');
  const lost = await startSession(host, sb, 'sms', 'owner-2');
  const call1 = await startSession(host, sb, 'reverse_flash_call', 'owner-3');
  await sendCode(sb, sms);
  await call(
    host.url,
    'POST',
    '/verification/check',
    { verification_id: sms.verificationId, code: sb.getSession(sms.requestId)!.code },
    { 'x-user': sms.owner },
  );
  await sb.call(call1.requestId, call1.phone);
  await settle(sb);
  await sb.recalculate(sms.requestId, 1);
  await sb.advance(61_000);
  return [sms, lost, call1];
}

describe.each(PLATFORMS)('the ops page behind the host’s guard (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  let sessions: StartedSession[];
  let day: string;

  beforeAll(async () => {
    sb = suite.sb;
    await sb.advance(DAY - (sb.now() % DAY) + 2 * HOUR);
    day = new Date(sb.now()).toISOString().slice(0, 10);
    host = await suite.boot(() => hostWithPage(sb, platform));
    sessions = await playDay(sb, host);
  });

  it('without the guard’s say, the page and its export answer 403 and nothing of the day', async () => {
    for (const path of [
      '/admin/verification',
      '/admin/verification/ledger.csv',
      '/admin/verification?lang=ru',
    ]) {
      const res = await call(host.url, 'GET', path);
      expect([path, res.status]).toEqual([path, 403]);
      expect(res.text).not.toContain('+7912');
    }
    const wrong = await call(host.url, 'GET', '/admin/verification', undefined, { 'x-admin': 'no' });
    expect(wrong.status).toBe(403);
  });

  it('shows the day’s funnel, cost per verified user, drift and method health; no number on it', async () => {
    const res = await call(host.url, 'GET', '/admin/verification', undefined, ADMIN);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = res.text;
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('Funnel of sms: 2 / 1 / 1');
    expect(html).toContain('Funnel of reverse_flash_call: 1 / 0 / 1');
    expect(html).toContain('Cost per verified user: 1.625 RUB');
    expect(html).toMatch(/Drift<\/dt><dd><span class="beyond">-2 RUB \(beyond the tolerance\)/);
    expect(html).toContain('<svg role="img"');
    for (const s of sessions) {
      expect(html).not.toContain(s.phone);
      expect(html).not.toContain(s.phone.slice(-7));
      expect(html).not.toContain(s.owner);
    }
    expect(html).not.toContain(sb.demoAccount.apiSecret);
  });

  it('speaks Russian', async () => {
    const res = await call(host.url, 'GET', `/admin/verification?lang=ru&date=${day}`, undefined, ADMIN);
    expect(res.status).toBe(200);
    expect(res.text).toContain('<html lang="ru">');
    expect(res.text).toContain('Воронка sms: 2 / 1 / 1');
    expect(res.text).toContain('Расхождение');
  });

  it('counts the day’s holds and attacks as the module announces them', async () => {
    const ledger = host.app.get(VerificationLedger);
    // The day turns final: the drift is announced once, and the page counts it for its day.
    await sb.advance(Date.parse(`${day}T00:00:00Z`) + DAY + HOUR - sb.now());
    await ledger.report(day);
    const res = await call(host.url, 'GET', `/admin/verification?date=${day}`, undefined, ADMIN);
    const today = new Date(sb.now()).toISOString().slice(0, 10);
    const now = await call(host.url, 'GET', `/admin/verification?date=${today}`, undefined, ADMIN);
    expect(now.text).toMatch(/<td>verification\.ledger_drift<\/td><td class="n">1<\/td>/);
    expect(res.text).not.toContain('verification.ledger_drift');
  });

  it('exports the day’s ledger as CSV, formula-like cells defused', async () => {
    const res = await call(host.url, 'GET', `/admin/verification/ledger.csv?date=${day}`, undefined, ADMIN);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv; charset=utf-8/);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="ledger.csv"');
    // The undelivered SMS may have expired by now (nothing charged for it either way).
    expect(res.text).toMatch(new RegExp(`\\r\\n${day},sms,'\\+7912,2,1,1,[01],0,3,3,RUB\\r\\n`));
  });

  it('the CSV is the page’s twin for caches: never stored (the day’s money figures), never sniffed', async () => {
    const headers = async (path: string) => {
      const res = await call(host.url, 'GET', `${path}?date=${day}`, undefined, ADMIN);
      return [res.status, res.headers.get('cache-control'), res.headers.get('x-content-type-options')];
    };
    expect(await headers('/admin/verification/ledger.csv')).toEqual([200, 'no-store', 'nosniff']);
    expect(await headers('/admin/verification')).toEqual([200, 'no-store', 'nosniff']);
  });

  it('the page’s CSP lets its inline style alone: no script, no frame around it, no form, no base', async () => {
    const res = await call(host.url, 'GET', '/admin/verification', undefined, ADMIN);
    const directives = Object.fromEntries(
      (res.headers.get('content-security-policy') ?? '')
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values]),
    );
    expect(directives).toStrictEqual({
      'default-src': ["'none'"],
      'style-src': ["'unsafe-inline'"],
      'img-src': ["'self'"],
      'base-uri': ["'none'"],
      'form-action': ["'none'"],
      'frame-ancestors': ["'none'"],
    });
  });

  it.each([
    ['lang=de', 'lang'],
    ['lang=en&lang=ru', 'lang'],
    ['date=2026-02-31', 'date'],
    ['date=2999-01-01', 'date'],
    ['date[]=1', 'date[]'],
    ['date=2026-01-01&date=2026-01-02', 'date'],
    ['evil=1', 'evil'],
  ])('refuses ?%s with a 400 problem naming %s', async (query, field) => {
    for (const path of ['/admin/verification', '/admin/verification/ledger.csv']) {
      const res = await call(host.url, 'GET', `${path}?${query}`, undefined, ADMIN);
      expect([path, res.status]).toEqual([path, 400]);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 400, error_code: 'validation_error', errors: [{ field }] });
    }
  });
});

describe('a page nobody guards does not boot', () => {
  it.each([
    [{ path: 'admin', guards: [] }, 'option "guards" must name at least one of your guards'],
    [{ path: 'admin', guards: undefined }, 'option "guards"'],
    [{ path: 'admin', guards: [42] }, 'option "guards[0]" must be a guard class or instance'],
    [{ path: '../x', guards: [AdminGuard] }, 'option "path" must be a route path'],
    [{ path: '', guards: [AdminGuard] }, 'option "path"'],
  ])('%j', (options, message) => {
    expect(() => createVerificationOpsController(options as never)).toThrow(message);
  });
});

describe('the ops page in Chromium: axe finds nothing, in English and Russian', () => {
  let browser: Browser;
  // Registered before the suite's hooks: the browser closes before the host and the sandbox, as its page's
  // connections must end first.
  afterAll(async () => {
    await browser?.close();
  });
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  let axe: string;

  beforeAll(async () => {
    sb = suite.sb;
    await sb.advance(DAY - (sb.now() % DAY) + 2 * HOUR);
    host = await suite.boot(() => hostWithPage(sb, 'express'));
    await playDay(sb, host);
    browser = await launchChromium();
    axe = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  });

  it.each(['en', 'ru'])('%s: 0 violations, and the page runs no script of its own', async (lang) => {
    // The page's CSP forbids every script; axe is let in by bypassing it, as a test tool.
    const context = await browser.newContext({ extraHTTPHeaders: ADMIN, bypassCSP: true });
    const page = await context.newPage();
    const response = await page.goto(`${host.url}/admin/verification?lang=${lang}`);
    expect(response?.status()).toBe(200);
    expect(await page.locator('script').count()).toBe(0);
    await page.addScriptTag({ content: axe });
    const violations = await page.evaluate<string[]>(`axe.run(document).then((r) =>
      r.violations.map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`);
    expect(violations).toEqual([]);
    await context.close();
  });

  it('under its own CSP, the page is styled: its inline style sheet applies', async () => {
    const context = await browser.newContext({ extraHTTPHeaders: ADMIN });
    const page = await context.newPage();
    expect((await page.goto(`${host.url}/admin/verification`))?.status()).toBe(200);
    const body = await page.evaluate<[string, boolean]>(`((style) =>
      [style.maxWidth, style.fontFamily.startsWith('system-ui')])(getComputedStyle(document.body))`);
    expect(body).toStrictEqual(['960px', true]);
    await context.close();
  });
});
