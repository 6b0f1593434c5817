/** The ops page's words, in each language it speaks. */
/** The languages of the ops page. */
export type OpsLanguage = 'en' | 'ru';
export const OPS_LANGUAGES: readonly OpsLanguage[] = ['en', 'ru'];

export interface OpsTexts {
  title: string;
  day: string;
  funnel: string;
  funnelChart: (method: string) => string;
  method: string;
  prefix: string;
  started: string;
  delivered: string;
  verified: string;
  costPerVerified: string;
  ledger: string;
  expected: string;
  charged: string;
  drift: string;
  driftBeyond: string;
  driftWithin: string;
  notRead: string;
  ledgerOff: string;
  incidents: string;
  incident: string;
  count: string;
  none: string;
  health: string;
  verifiedRate: string;
  language: string;
}

export const OPS_TEXTS: Readonly<Record<OpsLanguage, OpsTexts>> = {
  en: {
    title: 'Phone verification: operations',
    day: 'Day (UTC)',
    funnel: 'Funnel: started, delivered, verified',
    funnelChart: (method) => `Funnel of ${method}`,
    method: 'Method',
    prefix: 'Operator prefix',
    started: 'Started',
    delivered: 'Delivered',
    verified: 'Verified',
    costPerVerified: 'Cost per verified user',
    ledger: 'Ledger',
    expected: 'Expected by the billing rules',
    charged: 'Charged by the API',
    drift: 'Drift',
    driftBeyond: 'beyond the tolerance',
    driftWithin: 'within the tolerance',
    notRead: 'not read yet',
    ledgerOff: 'The ledger is off: give the ledger option.',
    incidents: 'Holds and attacks, last day',
    incident: 'Event',
    count: 'Count',
    none: 'None',
    health: 'Method health, last day',
    verifiedRate: 'Verified rate',
    language: 'Language',
  },
  ru: {
    title: 'Проверка телефона: эксплуатация',
    day: 'День (UTC)',
    funnel: 'Воронка: начато, доставлено, подтверждено',
    funnelChart: (method) => `Воронка ${method}`,
    method: 'Способ',
    prefix: 'Префикс оператора',
    started: 'Начато',
    delivered: 'Доставлено',
    verified: 'Подтверждено',
    costPerVerified: 'Стоимость на подтверждённого пользователя',
    ledger: 'Учёт расходов',
    expected: 'Ожидается по правилам тарификации',
    charged: 'Списано API',
    drift: 'Расхождение',
    driftBeyond: 'сверх допуска',
    driftWithin: 'в пределах допуска',
    notRead: 'ещё не прочитано',
    ledgerOff: 'Учёт расходов выключен: задайте опцию ledger.',
    incidents: 'Блокировки и атаки за сутки',
    incident: 'Событие',
    count: 'Количество',
    none: 'Нет',
    health: 'Состояние способов за сутки',
    verifiedRate: 'Доля подтверждённых',
    language: 'Язык',
  },
};
