// The head gallery (render layer): one card per head of the walkthrough's model, its attention map
// on the text as a small heat-map (the engine's Model.attentionMaps), its detector scores as badges
// (Model.headScores, named in the page's language), a switch that ablates it, and a button that
// opens it in the walkthrough. Sorted by the model's order or by any score, highest first.
import type { HeadScore } from '../../attnlab';
import type { HeadsGallery } from '../engine/protocol/heads';
import { t } from '../i18n';
import { sequentialScale } from '../util/color';
import { escapeHtml } from '../walkthrough/components/tokens_view';
import { scoreName } from './words';
import { headKey, type HeadsSort } from './state';

/** The score a head is sorted by; a head with no score (no row has the pattern) sorts last. */
const sortValue = (s: HeadScore, key: string) => (s as unknown as Record<string, number | null>)[key];

/** The heads in the order `sort` asks for. */
export function orderedHeads(g: HeadsGallery, sort: HeadsSort): HeadScore[] {
  const rows = [...g.scores];
  if (sort === 'layer') return rows;
  return rows.sort((a, b) => {
    const x = sortValue(a, sort), y = sortValue(b, sort);
    if (x === null || y === null) return x === null ? (y === null ? 0 : 1) : -1;
    return y - x || a.layer - b.layer || a.head - b.head;
  });
}

/** The head's highest score's key (its badge is marked), or null when it has none. */
function bestScore(s: HeadScore, names: string[]): string | null {
  let best: string | null = null;
  for (const k of names) {
    const v = sortValue(s, k);
    if (v !== null && (best === null || v > (sortValue(s, best) as number))) best = k;
  }
  return best;
}

const badge = (s: HeadScore, key: string, best: boolean) => {
  const v = sortValue(s, key);
  const title = v === null ? t('heads.badge.none', { name: scoreName(key) }) : t('heads.badge.title', { name: scoreName(key), v: v.toFixed(4) });
  return `<li class="badge${best ? ' best' : ''}" data-score="${key}" data-value="${v === null ? '' : String(v)}" title="${escapeHtml(title)}"><span class="n">${escapeHtml(scoreName(key))}</span> <b>${v === null ? '—' : v.toFixed(2)}</b></li>`;
};

const card = (g: HeadsGallery, s: HeadScore, off: boolean) => `
  <li class="head-card${off ? ' off' : ''}" data-layer="${s.layer}" data-head="${s.head}">
    <div class="head-top">
      <button type="button" class="head-open" data-act="open" title="${escapeHtml(t('heads.open.title', { layer: s.layer, head: s.head }))}">
        <canvas class="head-map" width="${g.tokens.length}" height="${g.tokens.length}" aria-hidden="true"></canvas>
        <span class="head-name">${escapeHtml(t('heads.head', { layer: s.layer, head: s.head }))}</span>
      </button>
      <label class="head-off"><input type="checkbox" data-act="off"${off ? ' checked' : ''} /> ${escapeHtml(t('heads.off'))}</label>
    </div>
    <ul class="badges">${g.scoreNames.map((k) => badge(s, k, k === bestScore(s, g.scoreNames))).join('')}</ul>
  </li>`;

/** Draws one head's (T, T) weights into its canvas, one pixel a cell (CSS scales it up). */
function drawMap(canvas: HTMLCanvasElement, g: HeadsGallery, layer: number, head: number) {
  const T = g.tokens.length;
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const scale = sequentialScale(1, 0);
  const base = (layer * g.heads + head) * T * T;
  const img = ctx.createImageData(T, T);
  for (let i = 0; i < T; ++i)
    for (let j = 0; j < T; ++j) {
      const c = hex(j > i ? '#e9e6e1' : scale.color(g.maps.data[base + i * T + j]));
      const at = 4 * (i * T + j);
      img.data[at] = c[0];
      img.data[at + 1] = c[1];
      img.data[at + 2] = c[2];
      img.data[at + 3] = 255;
    }
  ctx.putImageData(img, 0, 0);
}

/** An rgb(...) or #rrggbb colour as [r, g, b]. */
function hex(css: string): [number, number, number] {
  if (css.startsWith('#')) return [1, 3, 5].map((i) => parseInt(css.slice(i, i + 2), 16)) as [number, number, number];
  const m = css.match(/\d+/g) ?? ['0', '0', '0'];
  return [Number(m[0]), Number(m[1]), Number(m[2])];
}

/** Renders the gallery's cards into `list` (rebuilt: the heads, the order or the language changed). */
export function renderGallery(list: HTMLElement, g: HeadsGallery, sort: HeadsSort, off: string[]) {
  const rows = orderedHeads(g, sort);
  list.innerHTML = rows.map((s) => card(g, s, off.includes(headKey(s.layer, s.head)))).join('');
  list.style.setProperty('--heads', String(g.heads));
  list.dataset.sort = sort;
  list.querySelectorAll<HTMLElement>('.head-card').forEach((c) => drawMap(c.querySelector('canvas')!, g, Number(c.dataset.layer), Number(c.dataset.head)));
}
