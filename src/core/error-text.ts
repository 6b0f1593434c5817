/** Longest error text a log line carries: enough to act on, not a dump. */
const MAX_ERROR_TEXT = 300;

/**
 * What a log line says about a caught error: `Name: message` (so `error=Error` is never all an operator
 * reads), capped in length, or the thrown value's type. The package's own errors carry no secret in their
 * message; anything else still passes the logger's redaction (secrets, Basic headers, phone numbers).
 */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const text = error.message ? `${error.name}: ${error.message}` : error.name;
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}
