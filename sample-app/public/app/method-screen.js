import { demoApi } from './api.js';
import { formatPhoneNumber, h } from './format.js';

const waiting = (text) => h('p', { class: 'waiting' }, h('span', { class: 'spinner' }), text);

/**
 * The method's own screen for the verification `c` (start/status fields): what to do now.
 * `codeAccepted`: operator_id accepted the code and its result follows.
 */
export function methodScreen(c, codeAccepted) {
  const phone = formatPhoneNumber(c.phone_number);
  switch (c.method) {
    case 'sms':
      return [h('p', {}, `We sent a code by SMS to ${phone}. It can take a few seconds to arrive.`)];
    case 'msgr1_otp':
      return [h('p', {}, `We sent a code to your Messenger 1 app on ${phone}.`)];
    case 'flash_call':
      return [
        h(
          'p',
          {},
          `We are calling ${phone} and will hang up at once. You don't need to answer: ` +
            `the last ${c.code_length ?? 4} digits of the number that called you are your code.`,
        ),
      ];
    case 'voice':
      return [h('p', {}, `We are calling ${phone}; a voice reads your code.`)];
    case 'reverse_flash_call':
      return [
        h('p', {}, `Call this number from ${phone}:`),
        h(
          'p',
          {},
          h(
            'a',
            { class: 'call-number', href: `tel:${c.number_to_call}`, id: 'call-link' },
            formatPhoneNumber(c.number_to_call),
          ),
        ),
        h(
          'p',
          { class: 'muted' },
          'The call is free and hangs up by itself: we recognise your number and confirm it.',
        ),
        waiting('Waiting for your call…'),
      ];
    case 'msgr2_bot':
      return c.awaiting_code
        ? [
            h('p', {}, 'The bot sent you a code in Messenger 2. Enter it below.'),
            h(
              'p',
              { class: 'muted' },
              h('a', { href: c.deep_link, target: '_blank', rel: 'noopener' }, 'Open the bot again'),
            ),
          ]
        : [
            h(
              'p',
              {},
              'Open our bot in Messenger 2 and share your phone number: the bot then sends you a code.',
            ),
            h(
              'div',
              { class: 'bot-link' },
              h(
                'a',
                { class: 'open-bot', id: 'bot-link', href: c.deep_link, target: '_blank', rel: 'noopener' },
                'Open the bot',
              ),
              h('img', {
                id: 'bot-qr',
                src: demoApi.qrCodeUrl(c.deep_link),
                alt: 'QR code of the bot link: scan it with your phone',
                width: 132,
                height: 132,
              }),
            ),
            h('p', { class: 'muted' }, "On a computer? Scan the QR code with your phone's camera."),
            waiting('Waiting for you to share your number in the bot…'),
          ];
    case 'operator_id':
      return codeAccepted
        ? [waiting('Code accepted. Your operator is confirming…')]
        : c.awaiting_code
          ? [
              h(
                'p',
                {},
                "Your operator couldn't show the prompt, so we sent you a code by SMS. Enter it below.",
              ),
            ]
          : [
              h(
                'p',
                {},
                `Confirm on your phone: your mobile operator shows a prompt on ${phone}. Approve it.`,
              ),
              waiting('Waiting for your confirmation…'),
            ];
    default:
      return [h('p', {}, 'Follow the instructions you received on your phone.')];
  }
}
