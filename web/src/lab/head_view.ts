// A BertViz-style head view of the lab's model (render layer): the input's tokens in two columns,
// queries on the left and keys on the right, one line per (query, key) pair whose opacity and width
// are the engine's attention weight of the chosen layer and head (the lab's attention maps,
// Model.attentionMaps). Hovering a token keeps only its lines. The heatmaps sit beside it (view.ts).
import * as d3 from 'd3';
import type { AttentionMaps } from '../engine/protocol/lab';
import { t as tr } from '../i18n';
import { HEAD_COLORS } from '../util/color';

export interface HeadViewState {
  layer: number;
  head: number;
}

export function mountHeadView(host: HTMLElement, onPick: (pick: HeadViewState) => void) {
  host.innerHTML = `
    <p class="muted small" data-i18n="lab.headView.title">${tr('lab.headView.title')}</p>
    <div class="head-view-controls">
      <label><span data-i18n="lab.headView.layer">${tr('lab.headView.layer')}</span> <select name="hvLayer"></select></label>
      <label><span data-i18n="lab.headView.head">${tr('lab.headView.head')}</span> <select name="hvHead"></select></label>
    </div>
    <svg class="head-view-svg"></svg>`;
  host.addEventListener('change', () => {
    const layer = Number(host.querySelector<HTMLSelectElement>('select[name="hvLayer"]')!.value);
    const head = Number(host.querySelector<HTMLSelectElement>('select[name="hvHead"]')!.value);
    onPick({ layer, head });
  });
}

export function renderHeadView(host: HTMLElement, maps: AttentionMaps | null, pick: HeadViewState) {
  host.hidden = !maps;
  if (!maps) return;
  const [L, H, T] = maps.shape;
  const layer = Math.min(pick.layer, L - 1);
  const head = Math.min(pick.head, H - 1);
  const fill = (name: string, n: number, v: number) => {
    const sel = host.querySelector<HTMLSelectElement>(`select[name="${name}"]`)!;
    if (sel.options.length !== n) sel.innerHTML = Array.from({ length: n }, (_, k) => `<option value="${k}">${k}</option>`).join('');
    sel.value = String(v);
  };
  fill('hvLayer', L, layer);
  fill('hvHead', H, head);
  const labels = maps.labels.map((l) => (l === ' ' ? '␣' : l === '\n' ? '↵' : l));
  const rowH = 18;
  const width = 300;
  const colX = [90, width - 90];
  const height = T * rowH + 10;
  // The viewBox lets CSS scale the drawing down to a narrow box (styles.css: max-width 100%) instead of widening the page.
  const svg = d3.select(host).select<SVGSVGElement>('svg').attr('width', width).attr('height', height).attr('viewBox', `0 0 ${width} ${height}`);
  svg.attr('data-layer', layer).attr('data-head', head);
  const off = (layer * H + head) * T * T;
  const color = HEAD_COLORS[head % HEAD_COLORS.length];
  const y = (i: number) => 8 + i * rowH + rowH / 2;
  const pairs: { i: number; j: number; w: number }[] = [];
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) pairs.push({ i, j, w: maps.data[off + i * T + j] });
  svg
    .selectAll<SVGLineElement, (typeof pairs)[number]>('line.attn')
    .data(pairs, (d) => `${d.i},${d.j}`)
    .join('line')
    .attr('class', 'attn')
    .attr('data-i', (d) => d.i)
    .attr('data-j', (d) => d.j)
    .attr('data-w', (d) => d.w)
    .attr('x1', colX[0] + 4)
    .attr('x2', colX[1] - 4)
    .attr('y1', (d) => y(d.i))
    .attr('y2', (d) => y(d.j))
    .attr('stroke', color)
    .attr('stroke-opacity', (d) => d.w)
    .attr('stroke-width', (d) => 0.5 + 3 * d.w);
  for (const [side, x, anchor] of [['q', colX[0], 'end'], ['k', colX[1], 'start']] as const) {
    svg
      .selectAll<SVGTextElement, string>(`text.tok-${side}`)
      .data(labels)
      .join('text')
      .attr('class', `tok tok-${side}`)
      .attr('data-side', side)
      .attr('data-index', (_, i) => i)
      .attr('x', x)
      .attr('y', (_, i) => y(i))
      .attr('text-anchor', anchor)
      .attr('dominant-baseline', 'central')
      .text((l) => l);
  }
  // Hover a token: only its lines stay (its row as a query, its column as a key).
  svg.selectAll<SVGTextElement, string>('text.tok').on('mouseenter', function () {
    const side = this.getAttribute('data-side');
    const k = Number(this.getAttribute('data-index'));
    svg.selectAll<SVGLineElement, (typeof pairs)[number]>('line.attn').attr('visibility', (d) => ((side === 'q' ? d.i : d.j) === k ? 'visible' : 'hidden'));
  });
  svg.selectAll('text.tok').on('mouseleave', () => svg.selectAll('line.attn').attr('visibility', 'visible'));
}
