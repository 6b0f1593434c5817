import { DAY_MS } from '../core/clock.js';
import { parseTypedNumber } from '../core/phone-number.js';
import { VERIFICATION_DEFAULTS } from '../options/verification-options.defaults.js';
import { HISTORY_MAX_ENTRIES_BOUND } from '../options/integrator-features.options.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { numberRing, ownerRing, parseEntry, repeatsKey, ringOf, type StoredEntry } from './history-rings.js';
import { readLinks, unlinkRing } from './history-links.js';
import { replaceIfEquals } from '../store/store-replace.js';
import { SHELVES } from './history-shelves.js';
import { paidKey } from './refusal-admission.js';
import type { VerificationHistoryQuery } from './verification-history.types.js';

type Options = Pick<ResolvedVerificationOptions, 'history' | 'dataKeys' | 'phone'>;
/** An entry read, with its slot and the slot's stored text (an erasure writes the slot only while it holds that). */
type Found = { slot: string; entry: StoredEntry; text: string };

/**
 * A number's or an owner's erasure in the history: its own ring goes, with its folds and counters. A
 * number's erasure also takes its entries out of the rings of the owners they name. An owner's entries
 * in a number's ring are that number's subject's history (who verified the number, when: the trail
 * support reads after a takeover), not the owner's to remove: they stay, re-sealed without the owner,
 * until their own expiry. Answers how many entries the subject's own ring held. `alsoIn`: rings of the
 * other side the caller knows hold the subject (an entry that landed after its own ring was erased);
 * `upTo`: only entries written at or before it (an erasure redone: what came after it is not the erasure's).
 */
export async function forgetHistory(
  store: VerificationStore,
  options: Options,
  subject: VerificationHistoryQuery,
  alsoIn: readonly string[] = [],
  upTo = Infinity,
): Promise<number> {
  const keys = options.dataKeys;
  const subjectRing = ringOf(keys, subject, options.phone.defaultCountry);
  const [ring, links] = await Promise.all([
    readRing(store, options, subjectRing),
    readLinks(store, subjectRing),
  ]);
  // `upTo` (an erasure redone by an entry that was on its way): entries written since are not its own.
  const own = { ...ring, entries: ring.entries.filter(({ entry }) => entry.at <= upTo) };
  // The ring's counters and links go with its last entry only: restarted under a later one, they would
  // write over it.
  const whole = own.entries.length === ring.entries.length;
  const keysOf = whole ? [...own.slots, ...links.keys] : [];
  const byNumber = subject.phoneNumber !== undefined;
  const number = byNumber
    ? parseTypedNumber(subject.phoneNumber, options.phone.defaultCountry, 'phoneNumber').number
    : undefined;
  const others = new Set([
    ...alsoIn,
    ...links.rings,
    ...own.entries.flatMap(({ entry }) =>
      byNumber
        ? entry.owner === undefined
          ? []
          : [ownerRing(keys, entry.owner)]
        : [numberRing(keys, entry.phoneNumber)],
    ),
  ]);
  const related = await Promise.all([...others].map((ring) => readRing(store, options, ring)));
  const theirs = related.flatMap((r) =>
    r.entries.filter(
      ({ entry }) =>
        entry.at <= upTo && (byNumber ? entry.phoneNumber === number : entry.owner === subject.owner),
    ),
  );
  // A number's entries in its owners' rings go; an owner's in numbers' rings stay, without the owner.
  const [erased, anonymised] = byNumber ? [theirs, []] : [[], theirs];
  const withFolds = ({ slot, entry }: Found) =>
    entry.fold === undefined ? [slot] : [slot, repeatsKey(slot), entry.fold, `${entry.fold}:n`];
  // Redone under a later entry (the ring stays): a ring of the other side that the subject's entries left
  // (none written since the erasure, on either side) is unlinked both ways.
  const later = (entries: Found[], of: (entry: StoredEntry) => boolean) =>
    entries.some(({ entry }) => entry.at > upTo && of(entry));
  const left = [...others].filter(
    (other, r) =>
      !later(ring.entries, (entry) =>
        byNumber
          ? entry.owner !== undefined && ownerRing(keys, entry.owner) === other
          : numberRing(keys, entry.phoneNumber) === other,
      ) &&
      !later(related[r]!.entries, (entry) =>
        byNumber ? entry.phoneNumber === number : entry.owner === subject.owner,
      ),
  );
  await Promise.all([
    ...[...keysOf, ...own.entries.flatMap(withFolds)].map((key) => store.delete(key)),
    ...erased.map((found) => eraseOther(store, found, withFolds(found).slice(1))),
    ...anonymised.map((found) => anonymise(store, options, found)),
    ...(whole
      ? [...others].map((other) => unlinkRing(store, other, subjectRing))
      : left.flatMap((other) => [
          unlinkRing(store, other, subjectRing),
          unlinkRing(store, subjectRing, other),
        ])),
  ]);
  return own.entries.length;
}

/**
 * An entry of the other side's ring removed, with its folds: only while its slot still holds it (a new entry that
 * took the slot since it was read is not the erasure's).
 */
async function eraseOther(store: VerificationStore, { slot, text }: Found, folds: string[]): Promise<void> {
  if (await replaceIfEquals(store, slot, text, null, 1))
    await Promise.all(folds.map((key) => store.delete(key)));
}

/**
 * An entry of a number's ring kept in its slot without its owner, until its own expiry; only while the slot still
 * holds it (a new entry that took the slot since it was read stays).
 */
async function anonymise(
  store: VerificationStore,
  options: Options,
  { slot, entry, text }: Found,
): Promise<void> {
  const { retentionDays } = options.history === false ? VERIFICATION_DEFAULTS.history : options.history;
  const ttlMs = entry.at + retentionDays * DAY_MS - store.now();
  const { owner: _erased, ...kept } = entry;
  const value = ttlMs <= 0 ? null : options.dataKeys.seal(JSON.stringify(kept));
  await replaceIfEquals(store, slot, text, value, Math.max(ttlMs, 1));
}

/** A ring's entries with their slots, and every key of the ring (its counters included). */
async function readRing(
  store: VerificationStore,
  options: Options,
  ring: string,
): Promise<{ entries: Found[]; slots: string[] }> {
  // At least the default's slots: history off, or made smaller since.
  const size = Math.max(
    options.history === false ? 0 : options.history.maxEntries,
    VERIFICATION_DEFAULTS.history.maxEntries,
  );
  // A shelf's counter has numbered every slot it wrote (each entry renews it): a ring written with a larger
  // maxEntries than today's has slots past `size`, read up to the counter (at most the option's bound).
  const counts = await Promise.all(SHELVES.map((shelf) => store.get(`${ring}:${shelf}:seq`)));
  const wide = SHELVES.flatMap((shelf, s) =>
    Array.from(
      { length: Math.max(0, Math.min(Number(counts[s]) || 0, HISTORY_MAX_ENTRIES_BOUND) - size) },
      (_, i) => `${ring}:${shelf}:${size + i}`,
    ),
  );
  const read = [
    ...SHELVES.flatMap((shelf) => Array.from({ length: size }, (_, i) => `${ring}:${shelf}:${i}`)),
    ...wide,
  ];
  const texts = await Promise.all(read.map((key) => store.get(key)));
  // Every slot of `size`; past it, those that hold something.
  const slots = read.filter((_, i) => i < SHELVES.length * size || texts[i] !== null);
  const entries = texts.flatMap((text, i) => {
    const opened = text === null ? null : options.dataKeys.open(text);
    const entry = opened === null ? null : parseEntry(opened);
    return entry ? [{ slot: read[i]!, entry, text: text! }] : [];
  });
  const counters = [
    `${ring}:seq`,
    paidKey(ring),
    ...SHELVES.map((shelf) => `${ring}:${shelf}:seq`),
    ...read.filter((slot) => slot.startsWith(`${ring}:other:`)).map(repeatsKey),
  ];
  return { entries, slots: [...slots, ...counters] };
}
