import { describe, expect, it } from '@jest/globals';
import { lookalikeLink } from './test-deep-link.js';

describe('lookalikeLink', () => {
  it('keeps the bot and replaces the start token by one of the same length and character classes', () => {
    const real = 'https://msgr2.example/sandbox_verify_bot?start=0a9fB7Zq-x';
    const shape = (text: string) =>
      text
        .replace(/[0-9]/g, '9')
        .replace(/[a-f]/g, 'f')
        .replace(/[g-z]/g, 'a')
        .replace(/[A-F]/g, 'F')
        .replace(/[G-Z]/g, 'A');
    const links = Array.from({ length: 20 }, () => lookalikeLink(real)!);
    for (const link of links) {
      expect(link.startsWith('https://msgr2.example/sandbox_verify_bot?start=')).toBe(true);
      expect(shape(link)).toBe(shape(real));
    }
    // A fresh token each time: the real one is not handed out.
    expect(new Set(links).size).toBeGreaterThan(1);
    expect(links).not.toContain(real);
  });

  it('only the last query value is replaced', () => {
    const link = lookalikeLink('https://m.example/bot?lang=ru&start=abc123')!;
    expect(link).toMatch(/^https:\/\/m\.example\/bot\?lang=ru&start=[a-f]{3}\d{3}$/);
  });

  it('gives nothing for a link without a token, or not https', () => {
    expect(lookalikeLink('https://m.example/bot')).toBeUndefined();
    expect(lookalikeLink('https://m.example/bot?start=')).toBeUndefined();
    expect(lookalikeLink('http://m.example/bot?start=abc')).toBeUndefined();
    expect(lookalikeLink('javascript:alert(1)//?start=abc')).toBeUndefined();
  });
});
