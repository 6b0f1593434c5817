/** How many of the last copies made are looked at for an equal one. */
const REMEMBERED = 8;

/**
 * MemoryStore's copies of the strings it keeps for hours, each in one piece. A string built by
 * concatenation (a key from a template, a sealed value) is a rope of its parts, 32 B a part beside the
 * characters, and a slice keeps its whole parent alive; a copy is flat (a JSON round trip keeps every
 * code unit). One start writes the same text more than once (a session's id is the value of its
 * erasure slot and its member of the reconcile queue): a text equal to one of the last few copied gets
 * that copy, so the store keeps it once (strings never change: sharing one is invisible).
 */
export class FlatCopies {
  readonly #recent: string[] = [];
  #next = 0;

  /** A flat copy of `text`, the same string as an equal text's copied recently. */
  of(text: string): string {
    for (const copy of this.#recent) if (copy === text) return copy;
    const copy = JSON.parse(JSON.stringify(text)) as string;
    this.#recent[this.#next] = copy;
    this.#next = (this.#next + 1) % REMEMBERED;
    return copy;
  }
}
