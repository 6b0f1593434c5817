/**
 * The JSX type of `<phone-verification>` in React 19, checked by `npm run typecheck`
 * (test/element/tsconfig.json): what a host writes compiles, a wrong prop does not.
 */
import type {} from '../../src/element/react.js';

export const host = (confirm: (id: string | null) => void) => (
  <phone-verification
    base-url="/api/verification"
    methods="auto sms flash_call"
    credentials="header"
    headers={() => ({ authorization: 'Bearer token' })}
    texts={{ start: 'Send me a code' }}
    onverified={(event) => confirm(event.detail.verification_id)}
    onerror={(event) => console.warn(event.detail.error_code)}
  />
);

// @ts-expect-error credentials is same-origin, include or header
export const wrongMode = <phone-verification credentials="cookies" />;

// @ts-expect-error the event's detail is the element's, not any object
export const wrongDetail = <phone-verification onverified={(event) => event.detail.phone.length} />;
