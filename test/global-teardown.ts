/**
 * Stops the throwaway redis-server of test/global-setup.ts, if it started one. Nothing is
 * imported: jest loads this file through Node's own resolver (see global-setup.ts), and the
 * server object kept on globalThis carries its own stop().
 */
export default async function globalTeardown(): Promise<void> {
  const slot = globalThis as Record<symbol, unknown>;
  const key = Symbol.for('nestjs-phone-verification.test.sharedRedisServer');
  const server = slot[key] as { stop(): Promise<void> } | undefined;
  delete slot[key];
  await server?.stop();
}
