/**
 * What `owner(req)` and `limits.key(req)` receive: the raw Express or Fastify request. Both are
 * declared as methods, so a host annotates the request type its platform gives, without a cast:
 * `owner: (req: Request) => req.user?.id` (Express) or `(req: FastifyRequest) => …` (Fastify).
 */
export type HostRequest = unknown;
