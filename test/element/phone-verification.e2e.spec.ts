import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { VerificationService } from '../../src/verification/verification.service.js';
import { SandboxControlClient, VerificationSandbox } from '../../src/testing/index.js';
import { type TestApp } from '../support/verification-app.js';
import { axeViolations, startElementBrowser, type ElementBrowser } from './element-page.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const ALL = 'auto sms msgr1_otp flash_call reverse_flash_call msgr2_bot operator_id';
const FLOW_TIMEOUT_MS = 60_000;

/**
 * `<phone-verification>` in Chromium against a host app (Express) with the sandbox as the phone's
 * world: every method to verified, a wrong code, an expired session, a switch, a reload, a refused
 * and a held start; axe-core in every state. Locators pierce the element's open shadow root.
 */
describe('<phone-verification> in Chromium', () => {
  let browser: ElementBrowser;
  // Before the suite's hosts close (sandboxSuite's afterAll, declared after this one): a tab still open keeps
  // a connection to a host, and its close waited for it past the hook's 30 s on a busy CI machine.
  afterAll(async () => {
    await browser?.close();
  });
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let control: SandboxControlClient;
  let host: TestApp;
  /** The same module with the start guarded: a hook that refuses some numbers and one start per number. */
  let guarded: TestApp;
  /** The same module with the resend cooldown on (a minute) and nothing else that could refuse a start. */
  let cooled: TestApp;
  let next = 10;
  const national = (): string => `912 345-68-${next++}`;
  const e164 = (nat: string): string => '+7' + nat.replace(/\D/g, '');

  beforeAll(async () => {
    sb = suite.sb;
    control = new SandboxControlClient(sb.url);
    const api = { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret };
    host = await suite.boot({
      platform: 'express',
      module: { api, clock: () => sb.now(), limits: { enabled: false } },
    });
    guarded = await suite.boot({
      platform: 'express',
      module: {
        api,
        clock: () => sb.now(),
        limits: {
          startPerIp: false,
          startPerPhoneAndCaller: false,
          checkPerIp: false,
          pumping: false,
          coalesceStarts: false,
          resendCooldownMs: false,
          startPerPhone: { points: 1, windowMs: 3_600_000 },
          beforeStart: ({ phoneNumber }) =>
            phoneNumber.endsWith('99') ? { allow: false, reason: 'captcha' } : true,
        },
      },
    });
    cooled = await suite.boot({
      platform: 'express',
      module: {
        api,
        clock: () => sb.now(),
        limits: {
          startPerIp: false,
          startPerPhone: false,
          startPerPhoneAndCaller: false,
          checkPerIp: false,
          pumping: false,
          coalesceStarts: false,
          resendCooldownMs: 60_000,
        },
      },
    });
    browser = await startElementBrowser(() => sb.now() - Date.now());
  });

  const el = (page: Page, selector: string) => page.locator(`phone-verification ${selector}`);
  /** The id of the element focused inside the shadow root. */
  const focused = (page: Page): Promise<string | undefined> =>
    page.evaluate<string | undefined>('el.shadowRoot.activeElement?.id');
  const events = (page: Page): Promise<{ type: string; detail: Record<string, unknown> }[]> =>
    page.evaluate('events');
  async function expectAccessible(page: Page): Promise<void> {
    await expect(axeViolations(page)).resolves.toEqual([]);
  }

  async function open(
    attributes = `methods="${ALL}"`,
    query = '',
    app = host,
    context: BrowserContextOptions = {},
  ): Promise<Page> {
    return browser.open(app.url, attributes, query, context);
  }

  /** Types the number as a person would, picks the method (when offered) and starts. */
  async function start(page: Page, nat: string, method?: string): Promise<string> {
    await el(page, '#phone').pressSequentially(nat.replace(/\D/g, ''));
    if (method) await el(page, `input[name=method][value=${method}]`).check();
    await el(page, '#go').click();
    await page.waitForFunction(`el.client.getState().phase !== 'starting'`);
    return e164(nat);
  }

  async function sessionOf(number: string) {
    for (;;) {
      const sessions = await control.sessionsFor(number);
      // Newest first.
      if (sessions.length) return sessions[0]!;
    }
  }

  /** The text of `selector` once it has one (an answer is awaited). */
  async function shown(page: Page, selector: string): Promise<string> {
    await el(page, selector).filter({ hasText: /./ }).waitFor();
    return (await el(page, selector).textContent())!;
  }

  async function enterCode(page: Page, code: string): Promise<void> {
    // A fill is a paste: the whole code at once submits it.
    await el(page, '#code').fill(code);
  }

  async function expectVerified(page: Page, number: string): Promise<void> {
    await el(page, '#title').waitFor();
    await expect(el(page, '#title').textContent()).resolves.toBe('Your number is verified');
    const verified = (await events(page)).find((e) => e.type === 'verified');
    expect(verified?.detail).toMatchObject({ phone_number: number });
    // The host's backend trusts the handle, not the page.
    const phone = await host.app
      .get(VerificationService)
      .getVerifiedPhone(verified!.detail.verification_id as string);
    expect(phone).toBe(number);
    await expect(focused(page)).resolves.toBe('title');
  }

  it('axe looks inside the shadow root: a host theme with too little contrast is reported', async () => {
    const page = await open();
    try {
      await page.evaluate(`el.style.setProperty('--pv-muted', '#c8c8c8')`);
      const violations = await axeViolations(page);
      expect(violations.filter((v) => v.startsWith('color-contrast'))).toEqual([
        expect.stringContaining('#hint'),
      ]);
    } finally {
      await page.close();
    }
  });

  it(
    'sms chosen by the user: the number formatted as typed, a wrong code, then the right one pasted',
    async () => {
      const page = await open();
      try {
        await expectAccessible(page);
        const offered = await el(page, 'input[name=method]').evaluateAll((inputs) =>
          inputs.map((i) => (i as unknown as { value: string }).value),
        );
        expect(offered).toEqual(ALL.split(' '));
        const nat = national();
        await el(page, '#phone').pressSequentially(nat.replace(/\D/g, ''));
        await expect(el(page, '#phone').inputValue()).resolves.toBe(`+7 ${nat}`);
        await el(page, 'input[name=method][value=sms]').check();
        await el(page, '#go').click();
        const number = e164(nat);
        await el(page, '#code-form:not([hidden])').waitFor();
        await expect(el(page, '#code-label').textContent()).resolves.toBe('Enter the 6-digit code');
        const input = el(page, '#code');
        await expect(input.getAttribute('autocomplete')).resolves.toBe('one-time-code');
        await expect(input.getAttribute('inputmode')).resolves.toBe('numeric');
        await expect(input.getAttribute('size')).resolves.toBe('7');
        await expect(focused(page)).resolves.toBe('code');
        await expect(el(page, '#say').textContent()).resolves.toContain(`+7 ${nat}`);
        await expect(el(page, '#timer').textContent()).resolves.toMatch(/^Expires in \d+:\d\d$/);
        await expectAccessible(page);

        const session = await sessionOf(number);
        await control.deliver(session.requestId);
        const code = (await control.getSession(session.requestId)).code!;
        // While the code is being checked, the button cannot send it again.
        let release: () => void = () => undefined;
        const held = new Promise<void>((resolve) => (release = resolve));
        await page.route('**/verification/check', async (route) => {
          await held;
          await route.continue();
        });
        await enterCode(page, code.slice(0, 5) + ((Number(code[5]) + 1) % 10));
        await el(page, '#check:disabled').waitFor({ timeout: 10_000 });
        release();
        await page.unroute('**/verification/check');
        await expect(shown(page, '#task-error')).resolves.toBe('That code is not right. 2 attempts left.');
        await expect(el(page, '#check').isDisabled()).resolves.toBe(false);
        // Said once: the line under the field does not repeat it.
        await expect(el(page, '#attempts').textContent()).resolves.toBe('');
        await expect(input.inputValue()).resolves.toBe('');
        await expect(focused(page)).resolves.toBe('code');
        expect((await events(page)).map((e) => [e.type, e.detail.error_code])).toEqual([
          ['error', 'invalid_code'],
        ]);
        await expectAccessible(page);

        await enterCode(page, `${code.slice(0, 3)}-${code.slice(3)}`);
        await expectVerified(page, number);
        await expectAccessible(page);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it.each(['msgr1_otp', 'flash_call'])(
    '%s: the code the phone received verifies',
    async (method) => {
      const page = await open();
      try {
        const number = await start(page, national(), method);
        await el(page, '#code-form:not([hidden])').waitFor();
        const session = await sessionOf(number);
        await control.deliver(session.requestId);
        const after = await control.getSession(session.requestId);
        if (method === 'flash_call') {
          await expect(el(page, '#say').textContent()).resolves.toContain('The last 4 digits');
          await expect(el(page, '#code-label').textContent()).resolves.toBe('Enter the 4-digit code');
        }
        await enterCode(page, method === 'flash_call' ? after.incomingNumber!.slice(-4) : after.code!);
        await expectVerified(page, number);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'reverse_flash_call: the call card with its tel: link and a QR code on a desktop; the call verifies',
    async () => {
      const page = await open();
      try {
        const number = await start(page, national(), 'reverse_flash_call');
        const href = (await el(page, '#call').getAttribute('href'))!;
        expect(href).toMatch(/^tel:\+7800\d{7}$/);
        await expect(el(page, '[part~=qr] svg').getAttribute('aria-label')).resolves.toBe(
          `QR code of ${href}`,
        );
        await expect(el(page, '#code-form').isHidden()).resolves.toBe(true);
        await expect(focused(page)).resolves.toBe('call');
        await expectAccessible(page);
        const session = await sessionOf(number);
        await control.call(session.requestId, number);
        await expectVerified(page, number);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'on a phone: the call link to tap, no QR code, and the device hint says mobile',
    async () => {
      const page = await open(`methods="${ALL}"`, '', host, {
        isMobile: true,
        viewport: { width: 390, height: 844 },
        userAgent:
          'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/141.0.0.0 Mobile Safari/537.36',
      });
      const bodies: { device?: string }[] = [];
      page.on('request', (request) => {
        if (request.url().endsWith('/verification/start')) bodies.push(request.postDataJSON());
      });
      try {
        await start(page, national(), 'reverse_flash_call');
        await expect(el(page, '#call').getAttribute('href')).resolves.toMatch(/^tel:/);
        await expect(el(page, '[part~=qr]').count()).resolves.toBe(0);
        expect(bodies.map((b) => b.device)).toEqual(['mobile']);
        await expectAccessible(page);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'a link longer than a QR code holds: the link without a code, and no error in the page',
    async () => {
      const page = await open();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      const long = `https://msgr2.example/sandbox_verify_bot?start=${'a'.repeat(300)}`;
      // Every answer that carries the bot's link carries one of 347 bytes instead.
      await page.route('**/verification/**', async (route) => {
        // The status stream never ends (a fetch of it would wait for ever): refused, the client polls.
        if (route.request().url().endsWith('/events')) return route.abort();
        const response = await route.fetch();
        const body: unknown = await response.json().catch(() => undefined);
        if (body && typeof body === 'object' && 'deep_link' in body)
          await route.fulfill({ response, json: { ...body, deep_link: long } });
        else await route.fulfill({ response });
      });
      try {
        await start(page, national(), 'msgr2_bot');
        await expect(el(page, '#bot').getAttribute('href')).resolves.toBe(long);
        await el(page, '[part~=qr]').waitFor({ state: 'detached' });
        await expect(el(page, '#say').count()).resolves.toBe(1);
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'msgr2_bot: the bot link and its QR code, then the code the bot sent',
    async () => {
      const page = await open();
      try {
        const number = await start(page, national(), 'msgr2_bot');
        const link = (await el(page, '#bot').getAttribute('href'))!;
        expect(link).toMatch(/^https:\/\/msgr2\.example\//);
        // A new tab that cannot reach back into this page.
        await expect(el(page, '#bot').getAttribute('target')).resolves.toBe('_blank');
        await expect(el(page, '#bot').getAttribute('rel')).resolves.toBe('noopener');
        await el(page, '[part~=qr] svg').waitFor();
        await expect(focused(page)).resolves.toBe('bot');
        await expectAccessible(page);
        const session = await sessionOf(number);
        await control.share(session.requestId, number);
        // The bot's code is announced by no webhook here: the host page asks once, as the sample does.
        await page.evaluate('el.client.refresh()');
        await el(page, '#code-form:not([hidden])').waitFor();
        await expect(el(page, '#say').textContent()).resolves.toBe('The bot sent you a code.');
        await expect(focused(page)).resolves.toBe('code');
        await enterCode(page, (await control.getSession(session.requestId)).code!);
        await expectVerified(page, number);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'operator_id: the push approved on the phone',
    async () => {
      const page = await open();
      try {
        const number = await start(page, national(), 'operator_id');
        await expect(el(page, '#say').textContent()).resolves.toContain('Approve the prompt');
        await expect(focused(page)).resolves.toBe('say');
        await expectAccessible(page);
        await control.operator((await sessionOf(number)).requestId, 'approve');
        await expectVerified(page, number);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'operator_id: the push cannot be shown, an SMS code instead (any length of 4 to 8)',
    async () => {
      const page = await open();
      try {
        const number = await start(page, national(), 'operator_id');
        const session = await sessionOf(number);
        await control.operator(session.requestId, 'fallback');
        await page.evaluate('el.client.refresh()');
        await el(page, '#code-form:not([hidden])').waitFor();
        await expect(el(page, '#code-label').textContent()).resolves.toBe('Enter the code (4 to 8 digits)');
        // The operator sent that SMS: the module cannot send it again, so no resend is offered.
        await expect(el(page, '#resend').isHidden()).resolves.toBe(true);
        await expect(el(page, '#say').textContent()).resolves.toContain('sent a code by SMS');
        await expect(focused(page)).resolves.toBe('code');
        await expectAccessible(page);
        await el(page, '#code').fill((await control.getSession(session.requestId)).code!);
        await el(page, '#check').click();
        await expectVerified(page, number);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'auto (the default): no choice shown, the device hint sent, the policy picks the method',
    async () => {
      const page = await open('');
      const bodies: unknown[] = [];
      page.on('request', (request) => {
        if (request.url().endsWith('/verification/start')) bodies.push(request.postDataJSON());
      });
      try {
        await expect(el(page, '#methods').isHidden()).resolves.toBe(true);
        const number = await start(page, national());
        expect(bodies).toEqual([{ phone_number: number, method: 'auto', device: 'desktop' }]);
        await el(page, '#task:not([hidden])').waitFor();
        const method = await page.evaluate<string>('el.client.getState().method');
        expect(ALL.split(' ')).toContain(method);
        await expectAccessible(page);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'an expired session: the outcome in words, the expired event, focus on what to do next',
    async () => {
      const page = await open();
      try {
        await start(page, national(), 'sms');
        await el(page, '#code-form:not([hidden])').waitFor();
        await control.advance(15 * 60_000);
        await page.evaluate(`window.clockOffset += ${15 * 60_000}; el.client.refresh()`);
        await el(page, '#outcome:not([hidden])').waitFor();
        await expect(el(page, '#title').textContent()).resolves.toBe('The verification expired');
        expect((await events(page)).map((e) => e.type)).toContain('expired');
        const next = await focused(page);
        expect(['again', 'outcome-switch']).toContain(next);
        await expectAccessible(page);
        await el(page, '#again').click();
        await el(page, '#start:not([hidden])').waitFor();
        await expect(focused(page)).resolves.toBe('phone');
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'a switch: "try another way" counts down on the server clock, then moves to the next method',
    async () => {
      const page = await open();
      try {
        const number = await start(page, national(), 'sms');
        await el(page, '#code-form:not([hidden])').waitFor();
        const button = el(page, '#switch');
        await button.filter({ hasText: /^Another way in \d+:\d\d$/ }).waitFor({ state: 'attached' });
        await expect(button.isDisabled()).resolves.toBe(true);
        await control.advance(61_000);
        await page.evaluate(`window.clockOffset += 61000; el.client.refresh()`);
        await page.waitForFunction(`el.client.getState().canSwitch`);
        await expect(button.textContent()).resolves.toBe('Try another way');
        await expectAccessible(page);
        await button.click();
        await page.waitForFunction(`el.client.getState().method !== 'sms'`);
        const method = await page.evaluate<string>('el.client.getState().method');
        await expect(el(page, '#status').textContent()).resolves.toContain('Trying another way:');
        const focus = await focused(page);
        expect(focus).toBe(
          { reverse_flash_call: 'call', msgr2_bot: 'bot', operator_id: 'say' }[method] ?? 'code',
        );
        expect((await control.sessionsFor(number)).length).toBe(2);
        await expectAccessible(page);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it.each([
    ['stream', ''],
    ['polling', '?stream=off'],
  ])(
    'a reload mid-flow resumes the verification (%s)',
    async (_transport, query) => {
      const page = await open(`methods="${ALL}"`, query);
      try {
        const number = await start(page, national(), 'sms');
        await el(page, '#code-form:not([hidden])').waitFor();
        await page.reload();
        await page.waitForFunction(`'el' in window`);
        await el(page, '#code-form:not([hidden])').waitFor();
        await expect(el(page, '#status').textContent()).resolves.toBe(
          'Welcome back: your verification goes on.',
        );
        const session = await sessionOf(number);
        await control.deliver(session.requestId);
        await enterCode(page, (await control.getSession(session.requestId)).code!);
        await el(page, '#title').waitFor();
        expect((await events(page)).map((e) => e.type)).toEqual(['verified']);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'a refused start: the message, and focus on the start button',
    async () => {
      const page = await open(`methods="${ALL}"`, '', guarded);
      try {
        await start(page, '912 345-68-99', 'sms');
        await expect(shown(page, '#start-error')).resolves.toBe(
          'We cannot start a verification for this request now. Please try later.',
        );
        await expect(focused(page)).resolves.toBe('go');
        expect((await events(page)).map((e) => [e.type, e.detail.error_code])).toEqual([
          ['error', 'start_refused'],
        ]);
        await expectAccessible(page);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'a held start (429 with Retry-After): the wait counts down, the start waits for it',
    async () => {
      const nat = national();
      const first = await open(`methods="${ALL}"`, '', guarded);
      await start(first, nat, 'sms');
      await first.close();
      const page = await open(`methods="${ALL}"`, '', guarded);
      try {
        await start(page, nat, 'sms');
        await expect(shown(page, '#start-error')).resolves.toMatch(
          /^Too many attempts\. Please try again in \d+:\d\d\.$/,
        );
        await expect(el(page, '#go').getAttribute('aria-disabled')).resolves.toBe('true');
        await expect(focused(page)).resolves.toBe('go');
        await expectAccessible(page);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'cancel: the canceled event, the form back with the number, focus on it',
    async () => {
      const page = await open();
      try {
        const nat = national();
        await start(page, nat, 'sms');
        await el(page, '#cancel').click();
        await el(page, '#start:not([hidden])').waitFor();
        await expect(el(page, '#phone').inputValue()).resolves.toBe(`+7 ${nat}`);
        await expect(focused(page)).resolves.toBe('phone');
        expect((await events(page)).map((e) => e.type)).toEqual(['canceled']);
        // Back to the form, a page's own call with nothing to act on is refused without a word on the form.
        await page.evaluate(`el.client.reset(); el.client.check('1234')`);
        await page.waitForFunction(`el.client.getState().error?.code === 'no_verification'`);
        await expect(el(page, '#start-error').textContent()).resolves.toBe('');
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "in Russian by the page's language, with a text the host replaced",
    async () => {
      const page = await open(`methods="${ALL}"`, '?lang=ru');
      try {
        await page.evaluate(`el.setTexts({ start: 'Получить код' }, 'ru')`);
        await expect(el(page, 'label[for=phone]').textContent()).resolves.toBe('Номер телефона');
        await expect(el(page, '#go').textContent()).resolves.toBe('Получить код');
        const number = await start(page, national(), 'sms');
        await el(page, '#code-form:not([hidden])').waitFor();
        await expect(el(page, '#code-label').textContent()).resolves.toBe('Введите код из 6 цифр');
        const session = await sessionOf(number);
        await control.deliver(session.requestId);
        const code = (await control.getSession(session.requestId)).code!;
        await enterCode(page, code.slice(0, 5) + ((Number(code[5]) + 1) % 10));
        await expect(shown(page, '#task-error')).resolves.toBe('Неверный код. Осталось 2 попытки.');
        await expectAccessible(page);
        // The lang attribute on the element wins over the page's.
        await page.evaluate(`el.setAttribute('lang', 'en')`);
        await expect(el(page, '#code-label').textContent()).resolves.toBe('Enter the 6-digit code');
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'credentials="header": the host\'s header on every request, the status stream included',
    async () => {
      const page = await open(`methods="${ALL}" credentials="header"`, '?header=on');
      const seen: { path: string; token: string | undefined }[] = [];
      page.on('request', (request) => {
        const path = new URL(request.url()).pathname;
        if (path.startsWith('/verification/')) seen.push({ path, token: request.headers()['x-host-token'] });
      });
      try {
        const number = await start(page, national(), 'sms');
        await el(page, '#code-form:not([hidden])').waitFor();
        const session = await sessionOf(number);
        await control.deliver(session.requestId);
        await enterCode(page, (await control.getSession(session.requestId)).code!);
        await el(page, '#title').waitFor();
        expect(seen.map((s) => s.path)).toContain('/verification/start');
        // Read with fetch, so the stream carries the header an EventSource could not send.
        expect(seen.some((s) => s.path.endsWith('/events'))).toBe(true);
        expect(seen.every((s) => s.token === 'token-1')).toBe(true);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'in React 19: properties set as properties, on<event> props as listeners',
    async () => {
      const page = await open('', '?react=on');
      const tokens: (string | undefined)[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname.startsWith('/verification/'))
          tokens.push(request.headers()['x-host-token']);
      });
      try {
        await expect(page.evaluate(`el.getAttribute('headers')`)).resolves.toBeNull();
        await expect(el(page, '#go').textContent()).resolves.toBe('Send me a code');
        await start(page, national(), 'sms');
        await el(page, '#cancel').click();
        await el(page, '#start:not([hidden])').waitFor();
        expect((await events(page)).map((e) => e.type)).toEqual(['canceled']);
        expect(tokens.length).toBeGreaterThan(1);
        expect(tokens.every((token) => token === 'token-2')).toBe(true);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'keyboard only: Tab into the field, type, arrows pick the method, Enter starts, the code verifies',
    async () => {
      const page = await open();
      try {
        const nat = national();
        await page.keyboard.press('Tab');
        await expect(focused(page)).resolves.toBe('phone');
        await page.keyboard.type(nat.replace(/\D/g, ''));
        await page.keyboard.press('Tab');
        await expect(page.evaluate('el.shadowRoot.activeElement.value')).resolves.toBe('auto');
        await page.keyboard.press('ArrowDown');
        await expect(page.evaluate('el.shadowRoot.activeElement.value')).resolves.toBe('sms');
        await page.keyboard.press('Tab');
        await expect(focused(page)).resolves.toBe('go');
        await page.keyboard.press('Enter');
        await el(page, '#code-form:not([hidden])').waitFor();
        await expect(focused(page)).resolves.toBe('code');
        const session = await sessionOf(e164(nat));
        await control.deliver(session.requestId);
        await page.keyboard.type((await control.getSession(session.requestId)).code!);
        await expectVerified(page, e164(nat));
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'a double click on the start button starts once: one request, one session paid',
    async () => {
      const page = await open();
      try {
        const nat = national();
        await el(page, '#phone').pressSequentially(nat.replace(/\D/g, ''));
        await el(page, 'input[name=method][value=sms]').check();
        const starts: string[] = [];
        page.on('request', (request) => {
          if (request.method() === 'POST' && request.url().endsWith('/start')) starts.push(request.url());
        });
        await el(page, '#go').dblclick();
        await el(page, '#code-form:not([hidden])').waitFor();
        expect(starts).toHaveLength(1);
        expect((await control.sessionsFor(e164(nat))).length).toBe(1);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'resend during its cooldown: the button is shown, disabled, counting down to the new code',
    async () => {
      const page = await open(`methods="${ALL}"`, '', cooled);
      try {
        await start(page, national(), 'sms');
        await el(page, '#code-form:not([hidden])').waitFor();
        const resend = el(page, '#resend');
        await expect(resend.isVisible()).resolves.toBe(true);
        await expect(resend.isDisabled()).resolves.toBe(true);
        await expect(resend.textContent()).resolves.toMatch(/^New code in \S/);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'resend: a new code for the same number and method, the screen kept, focus back on the code',
    async () => {
      const page = await open();
      try {
        const number = await start(page, national(), 'sms');
        await el(page, '#code-form:not([hidden])').waitFor();
        const resend = el(page, '#resend');
        await expect(resend.textContent()).resolves.toBe('Send a new code');
        await resend.click();
        await page.waitForFunction(`el.client.getState().phase === 'awaiting_user'`);
        expect((await control.sessionsFor(number)).length).toBe(2);
        await expect(el(page, '#task').isVisible()).resolves.toBe(true);
        await expect(focused(page)).resolves.toBe('code');
        const session = await sessionOf(number);
        await control.deliver(session.requestId);
        await enterCode(page, (await control.getSession(session.requestId)).code!);
        await expectVerified(page, number);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );
});
