import { soakFetch } from './short-keep-alive.js';

/** The sandbox's control API over HTTP (it may run in another process): the end user's phone and the world. */

export interface ControlSession {
  request_id: string;
  phone_number: string;
  method: string;
  status: string;
  code: string | null;
  code_length: number | null;
  awaiting_code: boolean;
  charged: boolean;
  cost: { amount: number; currency: string } | null;
  expires_at: string;
  operator_state: string | null;
}

export class SandboxControl {
  constructor(
    readonly url: string,
    readonly apiKey: string,
  ) {}

  async sessionsFor(phone: string): Promise<ControlSession[]> {
    const body = await this.request<{ sessions: ControlSession[] }>(
      'GET',
      `/sessions?phone_number=${encodeURIComponent(phone)}`,
    );
    return body.sessions;
  }

  session(requestId: string): Promise<ControlSession> {
    return this.request('GET', `/sessions/${requestId}`);
  }

  act(requestId: string, action: 'deliver' | 'fail'): Promise<ControlSession>;
  act(requestId: string, action: 'share', body: { phone_number: string }): Promise<ControlSession>;
  act(requestId: string, action: 'call', body: { from: string }): Promise<ControlSession>;
  act(requestId: string, action: 'operator', body: { outcome: string }): Promise<ControlSession>;
  act(requestId: string, action: string, body?: unknown): Promise<ControlSession> {
    return this.request('POST', `/sessions/${requestId}/${action}`, body ?? {});
  }

  addFault(fault: unknown): Promise<unknown> {
    return this.request('POST', '/faults', fault);
  }

  clearFaults(): Promise<unknown> {
    return this.request('DELETE', '/faults');
  }

  async advance(ms: number): Promise<number> {
    return (await this.request<{ now: number }>('POST', '/clock', { advance_ms: ms })).now;
  }

  account(): Promise<{ balance: { amount: number }; webhook_url: string | null }> {
    return this.request('GET', `/accounts/${this.apiKey}`);
  }

  updateAccount(patch: Record<string, unknown>): Promise<unknown> {
    return this.request('PATCH', `/accounts/${this.apiKey}`, patch);
  }

  /** The sandbox's delivery log of one session's webhooks. */
  async webhookLog(
    requestId: string,
  ): Promise<{ request_id: string; event: string; status: number | string }[]> {
    const body = await this.request<{
      deliveries: { request_id: string; event: string; status: number | string }[];
    }>('GET', `/webhooks?request_id=${encodeURIComponent(requestId)}`);
    return body.deliveries;
  }

  async requestCounts(): Promise<Record<string, number>> {
    return (await this.request<{ counts: Record<string, number> }>('GET', '/requests')).counts;
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await soakFetch(`${this.url}/_sandbox${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok)
      throw new Error(`sandbox control ${method} ${path} answered ${res.status}: ${text.slice(0, 200)}`);
    return (text ? JSON.parse(text) : {}) as T;
  }
}
