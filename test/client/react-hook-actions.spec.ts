/**
 * `useVerification`'s actions are the client's: what a component asks through the hook (a start's number
 * and method, the method a "try by SMS" button switches to, a code) reaches the client routes as the
 * client's own call sends it. The hook runs in a component rendered once (react-dom/server), over the
 * fake client routes.
 */
import { describe, expect, it } from '@jest/globals';
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { useVerification, type UseVerification } from '../../src/client/react/index.js';
import { answer, clientHarness, journey } from './fake-routes.js';

describe("useVerification: the hook's actions send what the component asks", () => {
  const harness = clientHarness();

  function hookOf(client: ReturnType<typeof harness.client>): UseVerification {
    let hook: UseVerification | undefined;
    function Probe(): null {
      hook = useVerification({ client });
      return null;
    }
    renderToString(createElement(Probe));
    return hook!;
  }

  it('switchMethod(method) asks POST /switch for that method; switchMethod() for the next one', async () => {
    const first = answer(harness.routes, journey(harness.routes, ['flash_call'], ['sms', 'msgr1_otp'], 0));
    harness.routes.on('POST /start', { status: 201, body: first });
    harness.routes.on('GET /status', { status: 200, body: first });
    harness.routes.on('POST /switch', {
      status: 201,
      body: answer(harness.routes, journey(harness.routes, ['flash_call', 'msgr1_otp'], ['sms'], 0)),
    });
    const hook = hookOf(harness.client());
    await hook.start({ phoneNumber: '+79123456789', method: 'flash_call' });
    expect(harness.routes.requests.find((r) => r.route === 'POST /start')?.body).toMatchObject({
      phone_number: '+79123456789',
      method: 'flash_call',
    });
    await hook.switchMethod('msgr1_otp');
    await hook.switchMethod();
    const switches = harness.routes.requests.filter((r) => r.route === 'POST /switch').map((r) => r.body);
    expect(switches).toEqual([
      { verification_id: 'VID-1', method: 'msgr1_otp' },
      { verification_id: 'VID-1' },
    ]);
  });
});
