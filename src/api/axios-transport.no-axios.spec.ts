import { describe, expect, it, jest } from '@jest/globals';

/*
 * `transport: 'axios'` on a host without axios (an optional peer): the first call, or the module's boot, fails
 * with the option to change and the packages to install; a failure inside an installed axios is its own. Mocks
 * the package away, so it runs alone (imported by no merged file).
 */

/** What importing axios throws: Node's not-installed error unless a test sets another. */
let axiosFailure: Error = Object.assign(new Error("Cannot find package 'axios'"), {
  code: 'ERR_MODULE_NOT_FOUND',
});
jest.unstable_mockModule('axios', () => {
  throw axiosFailure;
});
const { VerificationApiClient } = await import('./verification-api.client.js');
const { AxiosTransport } = await import('./axios-transport.js');
const { VerificationOptionsError } = await import('../core/option-rules.js');

const INSTALL =
  "is 'axios' but axios or @nestjs/axios is not installed: run `npm i axios @nestjs/axios`, or leave the default 'undici'";

describe('the axios transport without axios installed', () => {
  it("a standalone client's first call names its option `transport` and the packages to install", async () => {
    const client = VerificationApiClient.create({
      baseUrl: 'http://127.0.0.1:9/api/',
      apiKey: 'k',
      apiSecret: 's',
      transport: 'axios',
    });
    try {
      const failure = await client.getBalance().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(VerificationOptionsError);
      expect((failure as Error).message).toBe(`VerificationApiClient: option "transport" ${INSTALL}`);
    } finally {
      client.close();
    }
  });

  it("the module's boot names its option `api.transport`", async () => {
    const transport = new AxiosTransport('VerificationModule');
    try {
      const failure = await transport.ready().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(VerificationOptionsError);
      expect((failure as Error).message).toBe(`VerificationModule: option "api.transport" ${INSTALL}`);
    } finally {
      transport.close();
    }
  });

  it('an axios that is installed but fails to load fails with its own error, not as missing', async () => {
    const broken = new SyntaxError('Unexpected token in axios/index.js');
    axiosFailure = broken;
    const transport = new AxiosTransport('VerificationApiClient');
    try {
      await expect(transport.ready()).rejects.toBe(broken);
    } finally {
      transport.close();
    }
  });
});
