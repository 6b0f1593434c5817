import { languageOf, MESSAGES, type TextKey, type Texts } from './messages.js';
import type { Translator } from './refusal-text.js';

/** The element's texts: its language (the nearest `lang`), the host's replacements, then the defaults. */
export class ElementTexts implements Translator {
  #overrides: Partial<Record<'en' | 'ru', Texts>> = {};
  readonly #host: HTMLElement;

  constructor(host: HTMLElement) {
    this.#host = host;
  }

  lang(): 'en' | 'ru' {
    const tagged = this.#host.closest('[lang]')?.getAttribute('lang') ?? document.documentElement.lang;
    return languageOf(tagged || navigator.language || 'en');
  }

  /** The texts the host replaced, in the element's language. */
  replaced(): Texts {
    return this.#overrides[this.lang()] ?? {};
  }

  /** Replaces texts (all or some, by key), for `lang` or for both languages. */
  replace(texts: Texts, lang?: 'en' | 'ru'): void {
    for (const l of lang ? [lang] : (['en', 'ru'] as const))
      this.#overrides[l] = { ...this.#overrides[l], ...texts };
  }

  t(key: TextKey, values: Record<string, string | number> = {}): string {
    const lang = this.lang();
    const text = this.#overrides[lang]?.[key] ?? MESSAGES[lang][key] ?? MESSAGES.en[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? ''));
  }

  attempts(n: number): string {
    const key = `attempts_${new Intl.PluralRules(this.lang()).select(n)}` as const;
    const text = this.t(key, { n });
    return text === key ? this.t('attempts_other', { n }) : text;
  }

  /** A method's name for the user (its own code when no text names it). */
  methodName(method: string | null): string {
    const key = `m_${method}` as TextKey;
    const name = this.t(key);
    return name === key ? (method ?? '') : name;
  }
}
