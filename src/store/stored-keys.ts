/**
 * How MemoryStore holds a key: a prefix of the keys a pending session keeps as one control character. A
 * session with protection on keeps about a dozen keys, each 8 to 24 B smaller so (a string's characters
 * are counted in steps of 8 B). The store is one process's, so no other reader ever sees the form.
 */
const PREFIXES = [
  'protect:pump:session:',
  'protect:pump:cm:',
  'protect:pump:sh:',
  'protect:pump:s:',
  'protect:pump:n:',
  'protect:pump:',
  'protect:start-phone-caller:',
  'protect:start-phone:',
  'protect:start-client:',
  'protect:spend-open:',
  'protect:cooldown:',
  'protect:',
  'session:{',
  'subject:{n:',
  'subject:{',
  'stats-giver:{',
  'stats-number:{',
  'stats-cell-net:{',
  'stats-admitted:{',
  'stats-counted:{',
  'status-reads:{',
  'erased:{',
] as const;

const CODE_OF = new Map<string, number>(PREFIXES.map((prefix, i) => [prefix, i + 1]));

/** The longest prefix a key begins with: alternatives are tried in order, so longer ones come first. */
const LONGEST = new RegExp(
  `^(?:${[...PREFIXES]
    .sort((a, b) => b.length - a.length)
    .map((prefix) => prefix.replace(/[{]/g, '\\$&'))
    .join('|')})`,
);

/** Code 0 marks a key kept as it is that begins with a code itself (no module key does): forms never collide. */
const ESCAPE = '\u0000';

/** The form MemoryStore keeps `key` under. */
export function storedKey(key: string): string {
  // A caller without types may pass anything: it finds nothing, as it did before keys were shortened.
  if (typeof key !== 'string') return key;
  const prefix = LONGEST.exec(key)?.[0];
  if (prefix !== undefined) return String.fromCharCode(CODE_OF.get(prefix)!) + key.slice(prefix.length);
  return key.charCodeAt(0) <= PREFIXES.length ? ESCAPE + key : key;
}

/** The key a stored form stands for (store dumps). */
export function keyOfStored(stored: string): string {
  const code = stored.charCodeAt(0);
  if (code === 0) return stored.slice(1);
  const prefix = code <= PREFIXES.length ? PREFIXES[code - 1] : undefined;
  return prefix === undefined ? stored : prefix + stored.slice(1);
}
