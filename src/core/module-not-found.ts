/**
 * True when an `import()` failed because the package is not installed (Node's code for ES modules, and for
 * CommonJS): how an optional peer's absence is told apart from a failure inside the package.
 */
export function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}
