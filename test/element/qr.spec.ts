import { describe, expect, it } from '@jest/globals';
import QRCode from 'qrcode';
import { encodeQr, qrSvg } from '../../src/element/qr.js';

/** The element's QR encoder module by module against the `qrcode` package, for every mask and version. */
describe('element QR encoder', () => {
  const texts = [
    'tel:+78001234567',
    'https://msgr2.example/sandbox_verify_bot?start=0123456789abcdef0123456789abcdef',
    'x'.repeat(100),
    'ж'.repeat(90),
    'y'.repeat(200),
  ];
  it.each(texts)('matches qrcode for %s at every mask', (text) => {
    for (let mask = 0; mask < 8; mask++) {
      const mine = encodeQr(text, mask)!;
      const reference = QRCode.create([{ data: Buffer.from(text, 'utf8'), mode: 'byte' }], {
        errorCorrectionLevel: 'M',
        maskPattern: mask as QRCode.QRCodeMaskPattern,
        version: (mine.size - 17) / 4,
      });
      expect(mine.size).toBe(reference.modules.size);
      expect(mine.modules.map(Number)).toEqual(Array.from(reference.modules.data));
    }
  });

  it('uses the smallest version that holds the text', () => {
    expect(encodeQr('x'.repeat(14))?.size).toBe(21);
    expect(encodeQr('x'.repeat(15))?.size).toBe(25);
    expect(encodeQr('x'.repeat(213))?.size).toBe(57);
    expect(encodeQr('x'.repeat(214))).toBeNull();
    expect(qrSvg('x'.repeat(214), 'link')).toBeNull();
    expect(qrSvg('x'.repeat(213), 'link')).toContain('viewBox="0 0 65 65"');
  });
});
