import { describe, expect, it } from '@jest/globals';
import { IDLE } from '../../src/client/client-state.js';
import { VerificationClientError } from '../../src/client/errors.js';
import type { UserPrompt, VerificationState } from '../../src/client/types.js';
import { focusAfter, focusOnRefusal } from '../../src/element/element-view.js';

/**
 * Where the element puts the keyboard focus after each change, without a browser: focus follows the flow
 * (the task, the outcome's next step, the field a refusal is about), so a keyboard or screen-reader user
 * is never left on a part that went away. The Chromium suite checks the same ids on a real page.
 */
const state = (over: Partial<VerificationState>): VerificationState => ({ ...IDLE, ...over });
const code: UserPrompt = { kind: 'code', length: 6, minLength: 6, maxLength: 6 };
const refusal = (code: string, problem = {}) => new VerificationClientError(code, 400, problem);

describe('the element moves focus with the flow', () => {
  it.each<[string, Partial<VerificationState>, string | undefined]>([
    ['a code to type', { phase: 'awaiting_user', prompt: code }, 'code'],
    [
      'a number to call',
      {
        phase: 'awaiting_user',
        prompt: { kind: 'call', numberToCall: '+78005551234', telHref: 'tel:+78005551234' },
      },
      'call',
    ],
    [
      'a bot to open',
      { phase: 'awaiting_user', prompt: { kind: 'link', deepLink: 'https://t.me/b' } },
      'bot',
    ],
    ['a push to approve', { phase: 'awaiting_user', prompt: { kind: 'push' } }, 'say'],
    ["the operator's verdict awaited", { phase: 'verifying', prompt: null }, 'say'],
    ['a code being checked', { phase: 'verifying', prompt: code }, undefined],
    ['verified', { phase: 'verified' }, 'title'],
    ['failed, another method to try', { phase: 'failed', canSwitch: true }, 'outcome-switch'],
    ['failed, nothing else to try', { phase: 'failed', canSwitch: false }, 'again'],
    ['expired, another method to try', { phase: 'expired', canSwitch: true }, 'outcome-switch'],
    ['expired, nothing else to try', { phase: 'expired', canSwitch: false }, 'again'],
    ['idle', { phase: 'idle' }, 'phone'],
    ['canceled', { phase: 'canceled' }, 'phone'],
    ['idle after a lost verification', { phase: 'idle', error: refusal('not_found') }, 'phone'],
    ['idle after a refused method', { phase: 'idle', error: refusal('method_not_available') }, 'options'],
    ['idle after a refused start', { phase: 'idle', error: refusal('rate_limit_exceeded') }, 'go'],
    ['starting', { phase: 'starting' }, undefined],
  ])('%s: %s', (_name, over, id) => {
    expect(focusAfter(state(over))).toBe(id);
  });

  it('a refused start goes back to the number only when the refusal is about the number', () => {
    expect(focusOnRefusal(refusal('phone_not_allowed'))).toBe('phone');
    const invalid = (field: string) =>
      refusal('validation_error', { errors: [{ field, message: 'invalid', code: 'invalid' }] });
    expect(focusOnRefusal(invalid('phone_number'))).toBe('phone');
    expect(focusOnRefusal(invalid('method'))).toBe('go');
    expect(focusOnRefusal(refusal('validation_error'))).toBe('go');
    expect(focusOnRefusal(refusal('method_not_available'))).toBe('options');
    expect(focusOnRefusal(refusal('service_unavailable'))).toBe('go');
  });
});
