// Small helpers shared by the stage components (render layer).
import { t as tr } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
export function section(host: HTMLElement, name: string, className = 'eqn'): HTMLElement {
  let el = host.querySelector<HTMLElement>(`:scope > [data-section="${name}"]`);
  if (!el) {
    el = document.createElement('div');
    el.className = className;
    el.dataset.section = name;
    host.appendChild(el);
  }
  return el;
}

export function note(host: HTMLElement, name: string, html: string) {
  const el = section(host, name, 'note');
  el.innerHTML = html;
}

/**
 * The most rows and columns a stage's matrix draws whole. The walkthrough's own layers stay within
 * it (d_model up to 64); an opened checkpoint's wider ones (GPT-2's d_model 768, a 768 × 768 W_O)
 * draw their first CUT_TO rows and columns, and the caption says how many of how many.
 */
export const MAX_DRAWN = 64;
export const CUT_TO = 32;

/** t with more than MAX_DRAWN rows (when `rows`) or columns (when `cols`) cut to its first CUT_TO, and the caption's words for what was left out ('' when nothing). */
export function firstCells(t: Tensor, cut: { rows?: boolean; cols?: boolean }): { data: Tensor; note: string } {
  const [R, K] = t.shape;
  const r = cut.rows && R > MAX_DRAWN ? CUT_TO : R;
  const k = cut.cols && K > MAX_DRAWN ? CUT_TO : K;
  if (r === R && k === K) return { data: t, note: '' };
  const out = new Float32Array(r * k);
  for (let i = 0; i < r; i++) out.set(t.data.subarray(i * K, i * K + k), i * k);
  const parts = [r < R ? tr('walk.fig.firstRows', { n: r, of: R }) : '', k < K ? tr('walk.fig.firstCols', { n: k, of: K }) : ''].filter(Boolean);
  return { data: { shape: [r, k], data: out }, note: ` · ${parts.join(', ')}` };
}

export const idx = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
export const shape = (...dims: (string | number)[]) => `(${dims.join(', ')})`;
