import {
  createVerificationClient,
  type FetchLike,
  type VerificationClient,
  type VerificationClientError,
  type VerificationClientOptions,
} from '../client/index.js';
import { RoutesTransport } from '../client/transport.js';

/** Headers the host adds to every request (`credentials="header"`): an object or a function giving one. */
export type HostHeaders =
  Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);

/**
 * `fetch` with the element's `credentials` mode and, for `credentials="header"`, the host's headers
 * (read per request, so a token may change).
 */
export function hostFetch(host: HTMLElement, headers: () => HostHeaders | undefined): FetchLike {
  return async (url, init) => {
    const mode = host.getAttribute('credentials');
    const given = headers();
    const extra = typeof given === 'function' ? await given() : given;
    return fetch(url, {
      ...init,
      credentials: mode === 'include' ? 'include' : mode === 'header' ? 'omit' : init.credentials,
      headers: { ...init.headers, ...(mode === 'header' && extra) },
    });
  };
}

/** The browser client of the element's routes (`base-url`), over `send`. */
export function elementClient(
  host: HTMLElement,
  baseUrl: string,
  send: FetchLike,
  options: VerificationClientOptions | undefined,
): VerificationClient {
  const mode = host.getAttribute('credentials');
  return createVerificationClient({
    baseUrl,
    fetch: send,
    ...(mode === 'header'
      ? // `send` adds the host's headers (they may be async) to every call; any `headers` makes the
        // client read the stream with fetch, which can carry them, where an EventSource cannot.
        { headers: {} }
      : {
          eventSource:
            typeof EventSource === 'function'
              ? (url: string) => new EventSource(url, { withCredentials: mode === 'include' })
              : null,
        }),
    ...options,
  });
}

/**
 * The methods to offer: `wanted` (the `methods` attribute) limited to what `GET /methods` says the
 * server offers (`all`: every one, in its order), and the module's `phone.defaultCountry` as it says
 * it. When the server cannot say: `wanted` as given (the start route refuses a method it does not
 * offer, in words), and why (`refusal`: the route's refusal, e.g. the host's 401).
 */
export async function offeredMethods(
  send: FetchLike,
  baseUrl: string,
  wanted: string[],
): Promise<{ offered: string[]; country?: string; refusal?: VerificationClientError }> {
  let country: string | undefined;
  try {
    const answer = await new RoutesTransport(baseUrl, send).request<{
      methods: { method: string }[];
      default_country?: string;
    }>('/methods', new AbortController().signal);
    const methods = answer.methods;
    country = answer.default_country;
    const offered = wanted.flatMap((m) =>
      m === 'all'
        ? methods.map((o) => o.method)
        : m === 'auto' || methods.some((o) => o.method === m)
          ? [m]
          : [],
    );
    return { offered, country };
  } catch (error) {
    return { offered: wanted.filter((m) => m !== 'all'), country, refusal: error as VerificationClientError };
  }
}
