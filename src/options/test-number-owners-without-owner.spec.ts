/**
 * Attack (lane attack-44): `testNumbers.owners` restricts reviewer numbers to those owners, matched on
 * `owner(req)`. A host that lists owners but gives no `owner` resolver (or forgets it in
 * forRootAsync) boots, with a warning that says the numbers are enabled "for 1 owner(s)": but no
 * caller ever has an owner, so no test number is ever played. The reviewer's every start is a real,
 * paid start to the reviewer's (often made-up) number, and the reviewer never gets the fixed code:
 * the host pays for messages nobody receives, and the app review is locked out.
 *
 * Expected: a boot error naming `testNumbers.owners` (it needs the `owner` option), or at least the
 * boot warning saying so instead of "for 1 owner(s)".
 *
 * Low to Medium (a configuration shape). FAILS ON PURPOSE on the current code.
 */
import { describe, expect, it } from '@jest/globals';
import { optionWarnings, resolveVerificationOptions } from './verification-options.resolver.js';

const api = { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' };

describe('testNumbers.owners without an owner resolver', () => {
  it('is refused at boot, or the boot warning says the owners can never match', () => {
    const options = {
      api,
      testNumbers: { numbers: [{ phoneNumber: '+79990000001', code: '123456' }], owners: ['reviewer'] },
    };
    let said: string;
    try {
      said = optionWarnings(resolveVerificationOptions(options)).join('\n');
    } catch (error) {
      said = (error as Error).message;
    }
    expect(said).toMatch(/testNumbers\.owners/);
    expect(said).toMatch(/"owner"/);
  });
});
