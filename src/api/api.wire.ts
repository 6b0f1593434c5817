/**
 * snake_case shapes of the verification API as they travel on the wire. Every field is optional and
 * loosely typed on purpose: the mapper validates what it reads and never trusts the server's shape.
 */

export interface MoneyWire {
  amount?: number | string;
  currency?: string;
}

export interface InitiateRequestWire {
  phone_number: string;
  method: string;
  expiry_seconds?: number;
}

export interface InitiateResponseWire {
  method?: string;
  request_id?: string;
  phone_number?: string;
  status?: string;
  cost?: MoneyWire;
  expires_at?: string;
  code_length?: number;
  number_to_call?: string;
  deep_link?: string;
  awaiting_code?: boolean;
  [extra: string]: unknown;
}

export interface VerificationSessionWire {
  request_id?: string;
  phone_number?: string;
  method?: string;
  status?: string;
  cost?: MoneyWire;
  created_at?: string;
  verified_at?: string | null;
  expires_at?: string;
  awaiting_code?: boolean;
  [extra: string]: unknown;
}

export interface CheckRequestWire {
  request_id: string;
  code: string;
}

export interface CheckResponseWire {
  request_id?: string;
  status?: string;
  phone_number?: string;
  [extra: string]: unknown;
}

export interface BalanceWire {
  balance?: MoneyWire;
}

export interface UsageDayWire {
  date?: string;
  total?: number;
  verified?: number;
}

export interface UsageSummaryWire {
  from?: string;
  to?: string;
  total_verifications?: number;
  successful?: number;
  success_rate?: number;
  total_cost?: MoneyWire;
  by_method?: Record<string, number>;
  by_status?: Record<string, number>;
  daily?: UsageDayWire[];
}

/**
 * `GET /v1/prices`: shape "not shown". Accepted: a list of `{ method, price: Money }` or
 * `{ method, amount, currency }`, or a map `{ method: Money | number }`, either at the top level or
 * under `prices`; an optional top-level `currency` applies to bare amounts.
 */
export type PriceEntryWire =
  | { method?: string; price?: MoneyWire | number | string }
  | { method?: string; amount?: number | string; currency?: string };
export type PricesWire =
  | PriceEntryWire[]
  | Record<string, MoneyWire | number | string>
  | { currency?: string; prices?: PriceEntryWire[] | Record<string, MoneyWire | number | string> };

/** RFC 7807 problem document with the API's extra fields. */
export interface ProblemWire {
  type?: string | null;
  title?: string | null;
  detail?: string | null;
  instance?: string | null;
  status?: number | null;
  error_code?: string;
  attempts_remaining?: number;
  [extra: string]: unknown;
}
