import { describe, expect, it } from '@jest/globals';
import { safeCode } from './http-transport.js';

describe('safeCode: what of a failure’s code may travel in an error message', () => {
  it.each(['ECONNRESET', 'ETIMEDOUT', 'EAI_AGAIN', 'ERR_BODY_TOO_LARGE', 'UND_ERR_SOCKET', 'A'.repeat(40)])(
    'an upper-case word of at most 40 characters, as it is: %s',
    (code) => expect(safeCode(code)).toBe(code),
  );

  it.each([
    // One character past the bound (OpenSSL's longest alert codes reach it).
    'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    'econnreset',
    'ECONNRESET https://user:secret@api.example/',
    'connect ECONNREFUSED 10.0.0.1:443',
    '',
    undefined,
    42,
  ])('anything else, as ENETWORK: %p', (code) => expect(safeCode(code)).toBe('ENETWORK'));
});
