import type { ControlActionResult, SandboxSessionView } from 'nestjs-phone-verification/testing';
import { DemoProblem } from './demo-problem.js';

/** The sandbox's control actions the simulated phone uses (`POST /_sandbox/sessions/:id/<action>`). */
export type ControlAction = 'deliver' | 'share' | 'call' | 'operator';

/**
 * Plays the end user's phone and the world through the sandbox's HTTP control API (`/_sandbox`),
 * exactly as a separate process would, so the page never needs the sandbox's address.
 */
export class SandboxControlClient {
  constructor(private readonly sandboxUrl: string) {}

  /** Sessions of a phone number, newest first. */
  async sessionsOf(phoneNumber: string): Promise<SandboxSessionView[]> {
    const body = await this.request<{ sessions: SandboxSessionView[] }>(
      'GET',
      `/_sandbox/sessions?phone_number=${encodeURIComponent(phoneNumber)}`,
    );
    return body.sessions;
  }

  async session(requestId: string): Promise<SandboxSessionView> {
    return this.request<SandboxSessionView>('GET', `/_sandbox/sessions/${encodeURIComponent(requestId)}`);
  }

  async act(requestId: string, action: ControlAction, body?: object): Promise<ControlActionResult> {
    return this.request<ControlActionResult>(
      'POST',
      `/_sandbox/sessions/${encodeURIComponent(requestId)}/${action}`,
      body,
    );
  }

  /** Moves the sandbox's clock; returns its new time (ms since the epoch). */
  async advanceClock(ms: number): Promise<number> {
    return (await this.request<{ now: number }>('POST', '/_sandbox/clock', { advance_ms: ms })).now;
  }

  private async request<T>(method: 'GET' | 'POST', path: string, body?: object): Promise<T> {
    const response = await fetch(this.sandboxUrl + path, {
      method,
      headers: body === undefined ? undefined : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if (!response.ok) {
      // The sandbox's own problem (for example 409 not_applicable, not_pending) passes through.
      throw new DemoProblem(
        response.status,
        typeof parsed.error_code === 'string' ? parsed.error_code : 'sandbox_error',
        typeof parsed.detail === 'string' ? parsed.detail : `The sandbox answered ${response.status}`,
      );
    }
    return parsed as T;
  }
}
