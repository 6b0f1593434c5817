import { Inject, type InjectionToken } from '@nestjs/common';
import { VerificationAccountService } from '../account/verification-account.service.js';
import { VerificationHistory } from '../history/verification-history.service.js';
import { VerificationLedger } from '../ledger/verification-ledger.service.js';
import { VerificationErasure } from '../verification/verification-erasure.js';
import { PhoneChange } from '../guard/phone-change.js';
import type { StoreOption } from '../options/verification.options.js';
import { isVerificationStore } from '../store/create-store.js';
import { RegistrationScopedStore } from '../store/registration-scoped-store.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { VerificationService } from '../verification/verification.service.js';

/**
 * Named registrations (`VerificationModule.forRoot({ name })`): several accounts in one app. Each
 * registration is a module instance of its own (its options, store, protection, routes and webhook
 * route); it exports its services under tokens carrying its name, which these helpers make.
 */

/** The token a named registration exports `token` under; the unnamed registration uses `token` itself. */
export function getVerificationToken(token: InjectionToken, name?: string): InjectionToken {
  if (name === undefined) return token;
  const label =
    typeof token === 'function'
      ? token.name
      : typeof token === 'symbol'
        ? (token.description ?? '')
        : String(token);
  return `nestjs-phone-verification:${name}:${label}`;
}

/** `@InjectVerificationService('brand-b')`: the VerificationService of that registration (none: the unnamed one). */
export const InjectVerificationService = (name?: string): PropertyDecorator & ParameterDecorator =>
  Inject(getVerificationToken(VerificationService, name));

/** The VerificationAccountService (balance, usage, prices) of a registration. */
export const InjectVerificationAccountService = (name?: string): PropertyDecorator & ParameterDecorator =>
  Inject(getVerificationToken(VerificationAccountService, name));

/** The VerificationStore of a registration. */
export const InjectVerificationStore = (name?: string): PropertyDecorator & ParameterDecorator =>
  Inject(getVerificationToken(VerificationStore, name));

/** The VerificationHistory of a registration. */
export const InjectVerificationHistory = (name?: string): PropertyDecorator & ParameterDecorator =>
  Inject(getVerificationToken(VerificationHistory, name));

/** The VerificationLedger (expected charges, drift, daily report) of a registration. */
export const InjectVerificationLedger = (name?: string): PropertyDecorator & ParameterDecorator =>
  Inject(getVerificationToken(VerificationLedger, name));

/** The VerificationErasure (deletion requests) of a registration. */
export const InjectVerificationErasure = (name?: string): PropertyDecorator & ParameterDecorator =>
  Inject(getVerificationToken(VerificationErasure, name));
/** The PhoneChange (a change of an owner's number) of a registration. */
export const InjectPhoneChange = (name?: string): PropertyDecorator & ParameterDecorator =>
  Inject(getVerificationToken(PhoneChange, name));

/**
 * A named registration's store option: on a Redis the host shares between registrations, the keys of
 * each go under a prefix of its own (`pv:<name>:`) unless the host gave one.
 */
export function registrationStore(
  store: StoreOption | undefined,
  name: string | undefined,
): StoreOption | undefined {
  if (name === undefined || store === undefined || typeof store !== 'object' || store === null) return store;
  if (!('url' in store || 'redis' in store) || store.keyPrefix !== undefined) return store;
  return { ...store, keyPrefix: `pv:${name}:` };
}

/**
 * A named registration's view of its opened store. Under its own prefix (`pv:<name>:`, the default) the
 * store is its own already; under a prefix the host chose, or a store instance the host gave, it may be
 * shared with other registrations, so the registration's own state goes under its name there
 * (RegistrationScopedStore) and only protection's counters are pooled.
 */
export function registrationScopedStore(
  opened: VerificationStore,
  store: StoreOption | undefined,
  name: string | undefined,
): VerificationStore {
  if (name === undefined || store === undefined) return opened;
  const chosen = isVerificationStore(store) || (store as { keyPrefix?: string }).keyPrefix !== undefined;
  return chosen ? new RegistrationScopedStore(opened, name) : opened;
}
