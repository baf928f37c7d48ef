// §5.2: a real poem's heat-map with its longest strong links marked: one head of tang on a held-out
// regulated poem (data/splits/tang_heldout.txt), the links at or above a weight drawn as arcs over
// the poem's lines and listed with their distances, and the head's full map.
import { t, type Key } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { sequentialScale } from '../../util/color';
import { renderHeatmap } from '../../ui/heatmap_canvas';
import { cellFor, note } from './draw';
import { defineFigure } from './figure';
import type { PoemLink, PoemLinksFigure } from './poem_links.compute';
import { SHIPPED_HEADS, SHIPPED_LAYERS, shippedRef } from './shipped';

/**
 * Held-out poems (chinese-poetry ids in data/splits/tang_heldout.txt), in simplified characters,
 * a couplet a line as tang was trained to read them.
 */
export const HELDOUT_POEMS = [
  { id: 'd748ec83-83cd-4ff8-8af6-bf6b5f22ca09', text: '曾陪鹤驭两三仙，亲侍龙舆四五年。\n天上欢华春有限，世间漂泊海无边。\n荣枯事过都成梦，忧喜心忘便是禅。\n官满更归何处去，香炉峰在宅门前。\n' },
  { id: 'dd37d952-4886-47b2-a34e-04a357320163', text: '江上日多雨，萧萧荆楚秋。\n高风下木叶，永夜揽貂裘。\n勋业频看镜，行藏独倚楼。\n时危思报主，衰谢不能休。\n' },
  { id: '3aed731e-5ee5-45d4-a3d0-26c8d2ff8dc5', text: '巴蜀愁谁语，吴门兴杳然。\n九江春草外，三峡暮帆前。\n厌就成都卜，休为吏部眠。\n蓬莱如可到，衰白问群仙。\n' },
  { id: '6b5ee9a9-e629-4f47-9787-ff75de3e5eb8', text: '君写我诗盈寺壁，我题君句满屏风。\n与君相遇知何处，两叶浮萍大海中。\n' },
] as const;

/** How many of the longest links are drawn and listed. */
const LINKS_LISTED = 8;
const HEADS = ['auto', ...SHIPPED_LAYERS.flatMap((l) => SHIPPED_HEADS.map((h) => `${l}.${h}`))];
const KIND_COLOR: Record<PoemLink['kind'], string> = { rhyme: '#ff725c', rhyme_next: '#ff8ab7', paired_line: '#4269d0', paired_next: '#6cc5b0', same_char: '#a463f2', other: '#9c6b4e' };

const linkKind = (k: PoemLink['kind']) => t(`ch.fig.links.kind.${k}` as Key);

/** Where a token sits, in words: line n, character c (1-based). */
function place(d: PoemLinksFigure, i: number): string {
  const s = d.slots[i];
  return s ? t('ch.fig.links.place', { line: s.line + 1, col: s.col + 1 }) : '';
}

/** The poem a line a row, the listed links as arcs from the key to the query. */
function poemArcs(host: HTMLElement, d: PoemLinksFigure, listed: PoemLink[]) {
  const lines = Math.max(...d.slots.map((s) => (s ? s.line + 1 : 0)));
  const cols = Math.max(...d.slots.map((s) => (s ? s.col + 1 : 0)));
  const cw = 34;
  const rh = 40;
  const W = cols * cw + 120;
  const H = lines * rh + 20;
  const xy = (i: number) => {
    const s = d.slots[i]!;
    return [40 + s.col * cw + cw / 2, 20 + s.line * rh + rh / 2] as const;
  };
  const chars = d.labels
    .map((c, i) => (d.slots[i] ? `<text x="${xy(i)[0]}" y="${xy(i)[1] + 6}" text-anchor="middle" font-size="18" data-token="${i}">${c}</text>` : ''))
    .join('');
  const arcs = listed
    .filter((k) => d.slots[k.query] && d.slots[k.key])
    .map((k) => {
      const [x1, y1] = xy(k.key);
      const [x2, y2] = xy(k.query);
      const bend = 14 + 4 * Math.sqrt(k.distance);
      const cx = (x1 + x2) / 2 + bend;
      const cy = (y1 + y2) / 2;
      return `<g class="link-arc" data-query="${k.query}" data-key="${k.key}"><path d="M${x1 + 8},${y1} Q${cx + 8},${cy} ${x2 + 8},${y2}" fill="none" stroke="${KIND_COLOR[k.kind]}" stroke-width="${1 + 4 * k.weight}" opacity="0.8"/><text x="${cx + 12}" y="${cy + 4}" font-size="11" fill="${KIND_COLOR[k.kind]}">${k.distance}</text></g>`;
    })
    .join('');
  const box = document.createElement('div');
  box.className = 'poem-arcs';
  const line = (i: number) => `<text x="4" y="${20 + i * rh + rh / 2 + 5}" font-size="11" class="muted">${i + 1}</text>`;
  box.innerHTML = `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${t('ch.fig.links.arcsAria', { n: listed.length })}">${Array.from({ length: lines }, (_, i) => line(i)).join('')}${arcs}${chars}</svg>`;
  host.appendChild(box);
}

function linkList(host: HTMLElement, d: PoemLinksFigure, listed: PoemLink[]) {
  const items = listed
    .map((k) => `<li data-query="${k.query}" data-key="${k.key}" data-weight="${k.weight}" data-distance="${k.distance}" data-kind="${k.kind}"><span class="swatch" style="background:${KIND_COLOR[k.kind]}"></span>${t('ch.fig.links.item', { q: d.labels[k.query], qAt: place(d, k.query), k: d.labels[k.key], kAt: place(d, k.key), w: k.weight.toFixed(2), n: k.distance, kind: linkKind(k.kind) })}</li>`)
    .join('');
  const box = document.createElement('div');
  box.className = 'poem-links';
  box.innerHTML = listed.length
    ? `<p class="small"><strong>${t('ch.fig.links.listTitle', { n: listed.length, all: d.links.length, w: d.threshold })}</strong></p><ol>${items}</ol>`
    : `<p class="small">${t('ch.fig.links.none', { w: d.threshold })}</p>`;
  host.appendChild(box);
}

export const poemLinksFigure = defineFigure({
  id: 'poem-links',
  shipped: () => 'tang',
  controls: [
    { name: 'poem', label: 'ch.fig.links.poem', values: HELDOUT_POEMS.map((_, i) => i), value: 0, labels: Object.fromEntries(HELDOUT_POEMS.map((_, i) => [String(i), `ch.fig.links.poem.${i}` as Key])) },
    { name: 'head', label: 'ch.fig.links.head', values: HEADS, value: 'auto', labels: { auto: 'ch.fig.links.auto' } },
    { name: 'w', label: 'ch.fig.links.threshold', values: [0.2, 0.3, 0.5], value: 0.3 },
  ],
  request: (v) => ({ figure: 'poemLinks', shipped: shippedRef('tang'), poem: HELDOUT_POEMS[Number(v('poem'))].text, head: String(v('head')), threshold: Number(v('w')) }),
  draw(host, d) {
    const T = d.labels.length;
    const fmt = (s: number | null) => (s === null ? '—' : s.toFixed(2));
    const why = d.chosen === 'auto' ? t('ch.fig.links.chosenAuto', { pattern: t(`ch.fig.pattern.${d.pattern}` as Key) }) : t('ch.fig.links.chosenReader');
    const scores = Object.entries(d.scores).map(([p, s]) => `${t(`ch.fig.pattern.${p}` as Key)} ${fmt(s)}`).join(', ');
    note(host, t('ch.fig.links.about', { layer: d.layer, head: d.head, why, scores }), { layer: d.layer, head: d.head });
    const listed = d.links.slice(0, LINKS_LISTED);
    poemArcs(host, d, listed);
    linkList(host, d, listed);
    const map: Tensor = { shape: [T, T], data: new Float32Array(d.weights.data) };
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) map.data[i * T + j] = -Infinity;
    // One canvas: the poem's T × T cells as an SVG matrix would hold the main thread for long.
    const box = document.createElement('div');
    box.className = 'fig-cell';
    host.appendChild(box);
    renderHeatmap(box, { name: 'poem-links-map', title: t('ch.fig.links.mapTitle', { layer: d.layer, head: d.head }), data: map, scale: sequentialScale(1), cell: cellFor(host, T, 12), rowLabels: d.labels, colLabels: d.labels });
    box.querySelector('canvas')!.setAttribute('aria-label', t('ch.fig.links.mapTitle', { layer: d.layer, head: d.head }));
  },
});
