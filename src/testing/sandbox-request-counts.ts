/** API requests received, by route key (`POST /v1/verify`, `GET /v1/verify/:id`, ...). Control requests are not counted. */
export class SandboxRequestCounts {
  private counts = new Map<string, number>();

  add(route: string): void {
    this.counts.set(route, (this.counts.get(route) ?? 0) + 1);
  }

  /** One route's count, or the total of all API routes. */
  count(route?: string): number {
    if (route !== undefined) return this.counts.get(route) ?? 0;
    let total = 0;
    for (const n of this.counts.values()) total += n;
    return total;
  }

  all(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  reset(): void {
    this.counts = new Map();
  }
}
