/** Longest error text a log line carries: enough to act on, not a dump. */
const MAX_ERROR_TEXT = 300;

/**
 * What a log line says about a caught error: `Name: message` (so `error=Error` is never all an operator
 * reads), capped in length, or the thrown value's type. The package's own errors carry no secret in their
 * message; anything else still passes the logger's redaction (secrets, Basic headers, phone numbers).
 */
export function errorText(error: unknown): string {
  let text: string;
  try {
    if (!(error instanceof Error)) return typeof error;
    text = error.message ? `${String(error.name)}: ${String(error.message)}` : String(error.name);
  } catch {
    // A host's error whose `name` or `message` getter throws (or a revoked Proxy): the line is still written.
    return 'Error (its name or message could not be read)';
  }
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}
