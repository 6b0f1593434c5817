import { createHmac, randomBytes } from 'node:crypto';

/** A signed Standard Webhooks request, as the sandbox would send it. */
export interface SignedWebhook {
  headers: Record<string, string>;
  body: string;
}

/** Signs `body` like the sandbox: `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` with the whsec_ key. */
export function signWebhook(
  secret: string,
  body: string,
  id = `msg_${randomBytes(16).toString('hex')}`,
  timestampSeconds = Math.floor(Date.now() / 1000),
): SignedWebhook {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestampSeconds),
      'webhook-signature': `v1,${signature}`,
    },
  };
}

/** The sandbox's payload for an event about a session (data as GET /_sandbox/sessions/:id shows it). */
export function webhookBody(event: string, data: Record<string, unknown>, now = Date.now()): string {
  return JSON.stringify({ type: event, timestamp: new Date(now).toISOString(), data });
}
