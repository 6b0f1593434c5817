import type { IncomingMessage, ServerResponse } from 'node:http';
import { problemBody, SandboxProblem } from './problem.js';
import { PhoneVerificationError } from '../core/phone-verification.error.js';

/** The body was larger than the cap: answered 413 and the connection closed. */
export class PayloadTooLarge extends SandboxProblem {
  constructor(limit: number) {
    super(413, 'payload_too_large', `The request body exceeds ${limit} bytes.`);
  }
}

/** Past the cap the rest of a body is read and discarded (so the client sees the 413) up to this much. */
const DRAIN_LIMIT = 16 * 1024 * 1024;

/** Reads the whole body, refusing (without buffering further) anything over `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    const refuse = (): void => {
      refused = true;
      chunks.length = 0;
      reject(new PayloadTooLarge(limit));
    };
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) refuse();
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (refused) {
        if (size > DRAIN_LIMIT) req.destroy();
        return;
      }
      if (size > limit) refuse();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (!refused) resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (!refused) reject(err);
    });
    // A client that goes away mid-body must not leave the handler waiting forever.
    req.on('close', () => {
      if (!refused && !req.complete)
        reject(new PhoneVerificationError('the client closed the connection before the body ended'));
    });
  });
}

/** Parses a JSON body; an empty body is `undefined`, malformed JSON a 400 `validation_error`. */
export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new SandboxProblem(400, 'validation_error', 'The body is not valid JSON.');
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

/** A problem document; 403 goes out with no body at all, as the spec says. */
export function sendProblem(res: ServerResponse, problem: SandboxProblem, instance?: string): void {
  if (problem.status === 403) {
    res.writeHead(403, { 'content-length': 0, ...problem.headers });
    res.end();
    return;
  }
  const payload = JSON.stringify(problemBody(problem, instance));
  res.writeHead(problem.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(payload),
    ...problem.headers,
  });
  res.end(payload);
}

export function sendText(res: ServerResponse, status: number, contentType: string, text: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A path segment decoded, or as it came when its percent-encoding is broken (it then matches nothing: 404). */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The request's URL; a request target that cannot be parsed is treated as `/` (answered 404). */
export function requestUrl(target: string | undefined): URL {
  try {
    return new URL(target ?? '/', 'http://sandbox.invalid');
  } catch {
    return new URL('/', 'http://sandbox.invalid');
  }
}
