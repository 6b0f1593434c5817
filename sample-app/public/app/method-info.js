/** How the page names and explains each method (the API's names are for machines). */
const METHODS = {
  sms: {
    title: 'SMS code',
    description: 'We text you a code; you type it here.',
    short: 'SMS code',
  },
  msgr1_otp: {
    title: 'Code in Messenger 1',
    description: 'The code arrives in your Messenger 1 app.',
    short: 'Messenger 1 code',
  },
  flash_call: {
    title: 'Missed call',
    description: "We call you and hang up; the caller's last digits are the code.",
    short: 'Missed-call code',
  },
  reverse_flash_call: {
    title: 'You call us',
    description: 'Call a number we show you; we recognise your number. Nothing to type.',
    short: 'Call to verify',
  },
  msgr2_bot: {
    title: 'Messenger 2 bot',
    description: 'Open our bot, share your number, and it sends you a code.',
    short: 'Messenger 2 bot',
  },
  operator_id: {
    title: 'Confirm with your mobile operator',
    description: 'Approve a prompt from your operator on your phone (an SMS code if that is not possible).',
    short: 'Operator confirmation',
  },
  voice: {
    title: 'Voice call',
    description: 'A robot calls you and reads the code.',
    short: 'Voice code',
  },
};

export function methodInfo(method) {
  return METHODS[method] ?? { title: method, description: '', short: method };
}
