/** The client IP as Express (`trust proxy`) or Fastify (`trustProxy`) computed it. */
export function clientIp(request: unknown): string | undefined {
  const ip = (request as { ip?: unknown } | undefined)?.ip;
  return typeof ip === 'string' && ip !== '' ? ip : undefined;
}
