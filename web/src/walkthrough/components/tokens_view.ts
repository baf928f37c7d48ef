// Stage: tokens. The sentence as numbered chips; padding chips greyed.
import { section } from './common';

export interface TokensProps {
  tokens: string[];
  padded: boolean[];
  /** How many chips are revealed (animation). */
  shown: number;
}

export function renderTokens(host: HTMLElement, p: TokensProps) {
  const el = section(host, 'tokens', 'tokens');
  const key = JSON.stringify([p.tokens, p.padded]);
  if (el.dataset.key !== key) {
    el.dataset.key = key;
    el.innerHTML = p.tokens
    .map(
      (t, i) =>
        `<div class="chip${p.padded[i] ? ' pad' : ''}" data-token="${i}"><span class="pos">${i}</span><span class="w">${escapeHtml(t)}</span></div>`,
    )
    .join('');
    void el.offsetWidth; // let the chips fade in from hidden
  }
  el.querySelectorAll<HTMLElement>('.chip').forEach((c, i) => c.classList.toggle('shown', i < p.shown));
}

export function escapeHtml(s: string) {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
}
