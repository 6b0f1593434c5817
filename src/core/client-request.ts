/**
 * The client address of a request whose TCP connection was reset before the module read it (its socket
 * answers no peer address any more; it still has its local port): not an IP, so such requests share one key
 * of every meter keyed by address (start limits, the free budget, the figures' address share) instead of
 * being taken for the host's own calls, which have no client address and no per-address meter.
 */
export const RESET_CONNECTION_ADDRESS = 'connection-reset';

/**
 * The client IP as Express (`trust proxy`) or Fastify (`trustProxy`) computed it; RESET_CONNECTION_ADDRESS
 * for a TCP connection already reset (a client that sends a request and resets at once, needing no answer).
 */
export function clientIp(request: unknown): string | undefined {
  const ip = (request as { ip?: unknown } | undefined)?.ip;
  if (typeof ip === 'string' && ip !== '') return ip;
  // Express's req.socket, Fastify's request.socket (or its raw request's). A Unix socket has no local port.
  const seen = request as { socket?: Socket; raw?: { socket?: Socket } } | undefined;
  const socket = seen?.socket ?? seen?.raw?.socket;
  return typeof socket?.localPort === 'number' ? RESET_CONNECTION_ADDRESS : undefined;
}

interface Socket {
  localPort?: number;
}
