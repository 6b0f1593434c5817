/**
 * Every text the element shows, in English and Russian. `{name}` is filled in; `attempts_*` and
 * `seconds_*` are plural forms (Intl.PluralRules categories). `e_<error_code>` is the message of each
 * `error_code` the client routes answer (and of the client's own codes); the host may replace any
 * text with `element.setTexts()`.
 */
/** The element's English texts, the keys every language has. */
export const EN_TEXTS = {
  phone: 'Phone number',
  phoneHint: 'For example, +7 912 345-67-89',
  method: 'How should we check it?',
  m_auto: 'Best way for this device',
  m_sms: 'SMS code',
  m_msgr1_otp: 'Code in Messenger 1',
  m_flash_call: 'Missed call',
  m_reverse_flash_call: 'You call us',
  m_msgr2_bot: 'Messenger 2 bot',
  m_operator_id: 'Confirm with your operator',
  m_voice: 'Voice call',
  start: 'Continue',
  s_sms: 'We sent a code by SMS to {phone}.',
  s_msgr1_otp: 'We sent a code to Messenger 1 on {phone}.',
  s_voice: 'We are calling {phone}: a voice reads your code.',
  s_flash_call:
    'We are calling {phone} and will hang up. The last {n} digits of the calling number are your code.',
  s_call: 'Call this number from {phone}. The call is free and ends by itself.',
  s_callWait: 'Waiting for your call…',
  s_bot: 'Open our bot and share your phone number: the bot sends you a code.',
  s_openBot: 'Open the bot',
  s_botCode: 'The bot sent you a code.',
  s_push: 'Approve the prompt your mobile operator shows on {phone}.',
  s_pushWait: 'Waiting for your confirmation…',
  s_pushSms: 'The operator could not show the prompt, so we sent a code by SMS to {phone}.',
  s_accepted: 'Code accepted. Your operator is confirming…',
  s_other: 'Follow the instructions on your phone.',
  qr: 'On a computer? Scan this with your phone.',
  qrLabel: 'QR code of {link}',
  code: 'Enter the {n}-digit code',
  codeRange: 'Enter the code ({min} to {max} digits)',
  check: 'Confirm',
  expires: 'Expires in {t}',
  resend: 'Send a new code',
  resendIn: 'New code in {t}',
  switch: 'Try another way',
  switchIn: 'Another way in {t}',
  switched: 'Trying another way: {method}.',
  cancel: 'Cancel',
  again: 'Start again',
  resumed: 'Welcome back: your verification goes on.',
  attempts_one: '{n} attempt left',
  attempts_other: '{n} attempts left',
  verified: 'Your number is verified',
  verifiedText: '{phone} is confirmed.',
  failed: 'We could not verify your number',
  failedText: 'Try another way or start again.',
  expired: 'The verification expired',
  expiredText: 'It was not completed in time. Please start again.',
  e_phone: 'Enter a phone number, for example +7 912 345-67-89.',
  e_codeFormat: 'Enter the digits of the code.',
  e_validation_error: 'Please check what you entered.',
  e_invalid_code: 'That code is not right.',
  e_invalid_code_left: 'That code is not right. {attempts}.',
  e_method_not_available: 'This way is not available. Please choose another.',
  /** The client moves to an offered method by itself; this shows only where it could not. */
  e_method_held: 'This way is not available for this number now. Please choose another.',
  e_phone_not_allowed: 'This number cannot be verified here. Please use another one.',
  e_phone_type: 'Only mobile numbers can be verified. Please enter a mobile number.',
  e_start_refused: 'We cannot start a verification for this request now. Please try later.',
  e_not_found: 'This verification cannot be found any more. Please start again.',
  e_not_pending: 'This verification is already over.',
  e_not_pending_expired: 'This verification has expired. Please start again.',
  e_not_pending_verified: 'This number is already verified.',
  e_not_pending_failed: 'This verification has failed. Please start again.',
  /** cross_site_request, unsupported_media_type, payload_too_large, purpose_not_allowed: the page is off. */
  e_page: 'This page cannot send the request. Please reload it.',
  e_rate_limit_exceeded: 'Too many attempts. Please try again later.',
  e_rate_limit_wait: 'Too many attempts. Please try again in {t}.',
  e_resend_cooldown: 'We just sent something to this number. You can ask again in {t}.',
  e_too_many_wrong_codes: 'Too many wrong codes. Please try again later.',
  e_switch_in_progress: 'Another way is already on its way. One moment, please.',
  e_fallback_not_available: 'Please give this way a little longer.',
  e_journey_limit_reached: 'There is no other way left for this number.',
  e_service_unavailable: 'Verification is unavailable right now. Please try again in a moment.',
  e_network_error: 'We cannot reach the server. Check your connection and try again.',
  e_unexpected_response: 'Something went wrong. Please try again.',
  e_no_verification: 'There is no verification in progress. Please start again.',
  e_resend_unavailable: 'A new code cannot be sent yet.',
  e_other: 'Something went wrong ({code}). Please try again.',
};

export type TextKey = keyof typeof EN_TEXTS | `attempts_${Intl.LDMLPluralRule}`;
export type Texts = Partial<Record<TextKey, string>>;

const ru: Texts = {
  phone: 'Номер телефона',
  phoneHint: 'Например, +7 912 345-67-89',
  method: 'Как проверить номер?',
  m_auto: 'Лучший способ для этого устройства',
  m_sms: 'Код в SMS',
  m_msgr1_otp: 'Код в Мессенджере 1',
  m_flash_call: 'Звонок-сброс',
  m_reverse_flash_call: 'Вы звоните нам',
  m_msgr2_bot: 'Бот в Мессенджере 2',
  m_operator_id: 'Подтверждение у оператора',
  m_voice: 'Голосовой звонок',
  start: 'Продолжить',
  s_sms: 'Мы отправили код в SMS на {phone}.',
  s_msgr1_otp: 'Мы отправили код в Мессенджер 1 на {phone}.',
  s_voice: 'Мы звоним на {phone}: голос продиктует код.',
  s_flash_call: 'Мы позвоним на {phone} и сбросим. Последние цифры номера звонящего ({n}) — ваш код.',
  s_call: 'Позвоните на этот номер с {phone}. Звонок бесплатный и завершится сам.',
  s_callWait: 'Ждём вашего звонка…',
  s_bot: 'Откройте нашего бота и поделитесь номером: бот пришлёт код.',
  s_openBot: 'Открыть бота',
  s_botCode: 'Бот прислал вам код.',
  s_push: 'Подтвердите запрос оператора на телефоне {phone}.',
  s_pushWait: 'Ждём подтверждения…',
  s_pushSms: 'Оператор не смог показать запрос, поэтому мы отправили код в SMS на {phone}.',
  s_accepted: 'Код принят. Оператор подтверждает…',
  s_other: 'Следуйте инструкциям на телефоне.',
  qr: 'С компьютера? Отсканируйте телефоном.',
  qrLabel: 'QR-код ссылки {link}',
  code: 'Введите код из {n} цифр',
  codeRange: 'Введите код (от {min} до {max} цифр)',
  check: 'Подтвердить',
  expires: 'Истекает через {t}',
  resend: 'Отправить новый код',
  resendIn: 'Новый код через {t}',
  switch: 'Другой способ',
  switchIn: 'Другой способ через {t}',
  switched: 'Пробуем другой способ: {method}.',
  cancel: 'Отмена',
  again: 'Начать заново',
  resumed: 'С возвращением: проверка продолжается.',
  attempts_one: 'Осталась {n} попытка',
  attempts_few: 'Осталось {n} попытки',
  attempts_many: 'Осталось {n} попыток',
  attempts_other: 'Осталось {n} попытки',
  verified: 'Номер подтверждён',
  verifiedText: 'Номер {phone} подтверждён.',
  failed: 'Не удалось подтвердить номер',
  failedText: 'Попробуйте другой способ или начните заново.',
  expired: 'Время проверки истекло',
  expiredText: 'Проверка не завершилась вовремя. Начните заново.',
  e_phone: 'Введите номер телефона, например +7 912 345-67-89.',
  e_codeFormat: 'Введите цифры кода.',
  e_validation_error: 'Проверьте, что вы ввели.',
  e_invalid_code: 'Неверный код.',
  e_invalid_code_left: 'Неверный код. {attempts}.',
  e_method_not_available: 'Этот способ недоступен. Выберите другой.',
  e_method_held: 'Для этого номера способ недоступен. Выберите другой.',
  e_phone_not_allowed: 'Этот номер здесь не проверить. Укажите другой.',
  e_phone_type: 'Проверить можно только мобильный номер.',
  e_start_refused: 'Сейчас нельзя начать проверку. Попробуйте позже.',
  e_not_found: 'Проверка больше не найдена. Начните заново.',
  e_not_pending: 'Проверка уже завершена.',
  e_not_pending_expired: 'Время проверки истекло. Начните заново.',
  e_not_pending_verified: 'Номер уже подтверждён.',
  e_not_pending_failed: 'Проверка не удалась. Начните заново.',
  e_page: 'Страница не может отправить запрос. Обновите её.',
  e_rate_limit_exceeded: 'Слишком много попыток. Попробуйте позже.',
  e_rate_limit_wait: 'Слишком много попыток. Попробуйте через {t}.',
  e_resend_cooldown: 'Сообщение уже отправлено. Повторить можно через {t}.',
  e_too_many_wrong_codes: 'Слишком много неверных кодов. Попробуйте позже.',
  e_switch_in_progress: 'Другой способ уже в пути. Подождите немного.',
  e_fallback_not_available: 'Дайте этому способу ещё немного времени.',
  e_journey_limit_reached: 'Других способов для этого номера не осталось.',
  e_service_unavailable: 'Проверка сейчас недоступна. Попробуйте чуть позже.',
  e_network_error: 'Нет связи с сервером. Проверьте подключение.',
  e_unexpected_response: 'Что-то пошло не так. Попробуйте снова.',
  e_no_verification: 'Нет текущей проверки. Начните заново.',
  e_resend_unavailable: 'Новый код пока нельзя отправить.',
  e_other: 'Что-то пошло не так ({code}). Попробуйте снова.',
};

export const MESSAGES: Record<'en' | 'ru', Texts> = { en: EN_TEXTS, ru };

/**
 * The message of an `error_code`: its own, the one the page-caused refusals share, or `e_other` for a
 * code this version does not know (a newer server's).
 */
export function errorKey(code: string): TextKey {
  if (/^(cross_site_request|unsupported_media_type|payload_too_large|purpose_not_allowed)$/.test(code))
    return 'e_page';
  // The host's own challenge (assessStart) is the page's to show, not the element's.
  const key = `e_${code === 'step_up_required' ? 'start_refused' : code}`;
  return key in EN_TEXTS ? (key as TextKey) : 'e_other';
}

/** The language of the element: `ru` for any Russian tag, else English. */
export const languageOf = (tag: string): 'en' | 'ru' => (/^ru\b/i.test(tag) ? 'ru' : 'en');

/** `m:ss`. */
export const duration = (ms: number): string => {
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
