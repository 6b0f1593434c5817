/**
 * What `owner(req)` and `limits.key(req)` receive: the raw Express or Fastify request. Both are
 * declared as methods, so a host annotates the request type its platform gives, without a cast:
 * `owner: (req: Request) => req.user?.id` (Express) or `(req: FastifyRequest) => …` (Fastify).
 */
export type HostRequest = unknown;

/** What `owner(req)` may answer: a user id, or nobody (`undefined`, or `null` as `req.user?.id ?? null` gives). */
export type OwnerAnswer = string | null | undefined;

/** Who the caller is by the host's `owner(req)`, as the client routes and the guard ask it: nobody for null. */
export async function callerOwner(
  owner: ((req: HostRequest) => OwnerAnswer | Promise<OwnerAnswer>) | undefined,
  request: HostRequest,
): Promise<string | undefined> {
  const answer = await owner?.(request);
  return answer === undefined || answer === null ? undefined : String(answer);
}
