import type { SandboxControlSession } from 'nestjs-phone-verification/testing';

/** What the person can do on the simulated phone. */
export type PhoneAction = 'deliver' | 'share' | 'call' | 'approve' | 'deny' | 'fallback';
export const PHONE_ACTIONS: readonly PhoneAction[] = [
  'deliver',
  'share',
  'call',
  'approve',
  'deny',
  'fallback',
];

/** Which app on the phone shows the session. */
export type PhoneApp = 'sms' | 'messenger1' | 'messenger2' | 'calls' | 'dialer' | 'operator';

/**
 * The phone's screen for one session:
 * - `waiting`: nothing arrived yet (the network is slow; `deliver` makes it arrive now);
 * - `code`: a message with the code (`code`);
 * - `missed_call`: a flash call from `incoming_number`, whose last digits are the code;
 * - `dial`: the user can call `number_to_call`;
 * - `share_prompt`: the bot behind `deep_link` asks for the number;
 * - `push`: the operator asks the subscriber to approve;
 * - `confirming`: the operator is confirming an accepted code;
 * - `ended`: nothing more on the phone (see `status`).
 */
export type PhoneScreenState =
  'waiting' | 'code' | 'missed_call' | 'dial' | 'share_prompt' | 'push' | 'confirming' | 'ended';

export interface PhoneScreenItem {
  session_id: string;
  method: string;
  status: string;
  app: PhoneApp;
  state: PhoneScreenState;
  code?: string;
  code_length: number;
  incoming_number?: string;
  number_to_call?: string;
  deep_link?: string;
  created_at: string;
  actions: PhoneAction[];
}

const APPS: Record<string, PhoneApp> = {
  sms: 'sms',
  msgr1_otp: 'messenger1',
  msgr2_bot: 'messenger2',
  flash_call: 'calls',
  reverse_flash_call: 'dialer',
  operator_id: 'operator',
};

const isPending = (s: SandboxControlSession): boolean => s.status === 'sent' || s.status === 'delivered';

/** Whether the code has reached the phone (the sandbox makes some codes before they are sent). */
function codeArrived(s: SandboxControlSession): boolean {
  if (s.code === null) return false;
  switch (s.method) {
    case 'msgr2_bot':
    case 'operator_id':
      return true; // their code exists only once the share or the SMS fallback sent it
    case 'sms':
    case 'flash_call':
      // Charged on delivery: an expired session that was charged had its code delivered.
      return s.status !== 'sent' && (s.status !== 'expired' || s.charged);
    default:
      return s.status === 'delivered' || s.status === 'verified' || s.status === 'failed';
  }
}

/** What the end user's phone shows for a sandbox session. */
export function toPhoneScreenItem(s: SandboxControlSession): PhoneScreenItem {
  const item: PhoneScreenItem = {
    session_id: s.requestId,
    method: s.method,
    status: s.status,
    app: APPS[s.method] ?? 'sms',
    state: 'ended',
    code_length: s.codeLength,
    created_at: s.createdAt,
    actions: [],
  };
  const pending = isPending(s);
  if (s.method === 'reverse_flash_call') {
    item.number_to_call = s.numberToCall ?? undefined;
    if (pending) Object.assign(item, { state: 'dial', actions: ['call'] });
    return item;
  }
  if (codeArrived(s)) {
    item.code = s.code!;
    if (s.method === 'flash_call')
      Object.assign(item, { state: 'missed_call', incoming_number: s.incomingNumber });
    else
      item.state = s.method === 'operator_id' && s.operatorState === 'code_accepted' ? 'confirming' : 'code';
    if (s.method === 'operator_id') item.app = 'sms'; // the fallback code comes by SMS
    return item;
  }
  if (!pending) return item;
  switch (s.method) {
    case 'msgr2_bot':
      return { ...item, state: 'share_prompt', deep_link: s.deepLink ?? undefined, actions: ['share'] };
    case 'operator_id':
      return s.operatorState === 'push_pending'
        ? { ...item, state: 'push', actions: ['approve', 'deny', 'fallback'] }
        : { ...item, state: 'confirming' };
    default:
      return { ...item, state: 'waiting', actions: ['deliver'] };
  }
}
