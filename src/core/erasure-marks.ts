import type { DataKeys } from './data-keys.js';

/** A subject of erasure: one phone number (E.164) or one owner. */
export type ErasureSubject =
  { phoneNumber: string; owner?: undefined } | { owner: string; phoneNumber?: undefined };

/** The subject's keyed tag, as its store keys name it (a hash tag keeps them on one cluster slot). */
export function subjectTag(keys: DataKeys, subject: ErasureSubject): string {
  return subject.phoneNumber !== undefined
    ? `subject:{n:${keys.digest(subject.phoneNumber)}}`
    : `subject:{o:${keys.digest(subject.owner)}}`;
}

/**
 * A subject's erasure mark: when it was last erased, and which erasure (`<at>:<random>`, written by
 * SubjectIndex.markForgotten before an erasure reads anything). A write that read it before it began and
 * finds it changed once it has landed knows an erasure may have missed it.
 */
export function erasureMarkKey(keys: DataKeys, subject: ErasureSubject): string {
  return erasureMarkOfTag(subjectTag(keys, subject));
}

/** `erasureMarkKey` of a subject known by its tag. */
export function erasureMarkOfTag(tag: string): string {
  return `${tag}:forgotten`;
}
