/**
 * The element's own styles (shadow DOM: nothing leaks in or out), by part so that a host's
 * `::part()` rules meet the same names. Colours meet WCAG AA on the default background; a host
 * themes with the `--pv-*` custom properties and `::part()`.
 */
// One rule a line here; the string (and so the bundle) has no newlines.
export const STYLES =
  ':host{display:block;color:var(--pv-text,#1f1f1f);font:var(--pv-font,inherit);max-width:var(--pv-width,26rem)}' +
  '[hidden]{display:none!important}' +
  '.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}' +
  'form,section{display:grid;gap:.75rem}' +
  'label,legend{font-weight:600}' +
  'fieldset{border:0;margin:0;padding:0;display:grid;gap:.4rem}' +
  '[part~=method]{font-weight:400;display:flex;gap:.5rem}' +
  'input[type=tel],[part~=code-input]{font:inherit;font-size:1.15em;padding:.5rem .7rem;border:1px solid var(--pv-border,#6b6b6b);border-radius:var(--pv-radius,.5rem);background:var(--pv-bg,#fff);color:inherit}' +
  '[part~=code-input]{letter-spacing:.3em;justify-self:start}' +
  '[part~=button]{font:inherit;padding:.6rem 1rem;border-radius:var(--pv-radius,.5rem);border:1px solid var(--pv-accent,#0b57d0);cursor:pointer;text-align:center;text-decoration:none;background:none;color:var(--pv-accent,#0b57d0)}' +
  '[part~=primary]{background:var(--pv-accent,#0b57d0);color:var(--pv-on-accent,#fff)}' +
  ':disabled{opacity:.65;cursor:default}' +
  ':focus-visible{outline:3px solid var(--pv-focus,#0b57d0);outline-offset:2px}' +
  'p{margin:0}' +
  '[part~=muted]{color:var(--pv-muted,#545454)}' +
  '[part~=error]{color:var(--pv-error,#b3261e)}' +
  '[part~=call-number]{font-size:1.5em;font-weight:700;color:var(--pv-accent,#0b57d0)}' +
  '[part~=qr] svg{width:var(--pv-qr-size,9rem);display:block}' +
  '[part~=actions]{display:flex;flex-wrap:wrap;gap:.5rem}' +
  '[part~=outcome-title]{font-size:1.2em;font-weight:700}';
