// Stage: concat. The split/concat layout as a picture of tensor shapes, then the joined matrix.
import { t as tr } from '../../i18n';
import * as d3 from 'd3';
import type { Tensor } from '../../engine/protocol/messages';
import { renderLegend } from '../../ui/legend';
import { renderMatrix } from '../../ui/matrix';
import { HEAD_COLORS, divergingScale, maxAbs } from '../../util/color';
import { firstCells, idx, section, shape } from './common';

export interface ConcatProps {
  tokens: string[];
  contexts: Tensor[];
  concat: Tensor;
  cell: number;
  /** 0: heads apart; 1: heads moved together. */
  joined: boolean;
}

export function renderConcat(host: HTMLElement, p: ConcatProps) {
  const H = p.contexts.length;
  const [T, C] = p.concat.shape;
  const D = C / H;
  const pic = section(host, 'concat-pic', 'shape-pic');
  // px per element in the picture: 16, fewer for a checkpoint's wide d_model (768 would be 12 000 px).
  const u = Math.max(1, Math.min(16, Math.floor(1100 / C)));
  const gap = 22;
  const x0 = 10;
  const yTop = 40;
  const yBottom = yTop + T * u + 64;
  // A split head's block is at least as wide as its label ("head 0"), so labels never run together.
  const labelPx = (text: string) => text.length * 7 + 8;
  const blockW = Math.max(D * u, labelPx(`head ${H - 1}`));
  const sides = [`context, split: H × ${shape('T', 'D')} = ${H} × ${shape(T, D)}`, `concat: ${shape('T', 'H·D')} = ${shape(T, C)}`];
  // The captions are drawn in one line each: the picture is as wide as the longest of them.
  const width = Math.max(x0 + H * (blockW + gap), x0 + C * u, ...sides.map((t) => x0 + labelPx(t))) + 20;
  const height = yBottom + T * u + 36;
  let svg = d3.select(pic).select<SVGSVGElement>('svg');
  if (svg.empty()) svg = d3.select(pic).append('svg');
  svg.attr('width', width).attr('height', height).attr('data-shape-pic', '1');
  const apart = (h: number) => `translate(${x0 + h * (blockW + gap)},${yTop})`;
  const together = (h: number) => `translate(${x0 + h * D * u},${yBottom})`;
  // The split heads (top) stay; a copy of each slides down into its place in the concat (bottom).
  for (const layer of ['split', 'joined'] as const) {
    const blocks = svg
      .selectAll<SVGGElement, number>(`g.block-${layer}`)
      .data(d3.range(H))
      .join((e) => {
        const g = e.append('g').attr('class', `block-${layer}`).attr('transform', apart);
        g.append('rect').attr('rx', 3);
        g.append('text').attr('class', 'blabel');
        return g;
      });
    blocks
      .select('rect')
      .attr('width', D * u)
      .attr('height', T * u)
      .attr('fill', (h) => HEAD_COLORS[h % HEAD_COLORS.length])
      .attr('fill-opacity', layer === 'split' ? 0.35 : 0.85)
      .attr('stroke', '#fff');
    blocks
      .select('text')
      .attr('x', (D * u) / 2)
      .attr('y', layer === 'split' ? -6 : (T * u) / 2 + 4)
      .attr('text-anchor', 'middle')
      .text((h) => (layer === 'split' ? tr('walk.step.heads.caption', { h }) : `h${h}`));
    if (layer === 'joined') {
      if (p.joined) blocks.transition().duration(800).delay((h) => h * 120).attr('transform', together);
      else blocks.interrupt().attr('transform', apart);
    }
  }
  svg
    .selectAll<SVGTextElement, string>('text.side')
    .data(sides)
    .join('text')
    .attr('class', 'side')
    .attr('x', x0)
    .attr('y', (_, k) => (k === 0 ? 14 : yBottom + T * u + 22))
    .text((d) => d);
  const mat = section(host, 'concat-mat');
  const drawn = firstCells(p.concat, { cols: true });
  renderMatrix(mat, {
    name: 'concat',
    title: tr('walk.fig.concat'),
    caption: shape('T', 'C') + ' = ' + shape(T, C) + ' · ' + tr('walk.fig.concatColour') + drawn.note,
    data: drawn.data,
    scale: divergingScale(maxAbs(p.concat.data)),
    cell: p.cell,
    rowLabels: p.tokens,
    colLabels: idx(drawn.data.shape[1], 'c'),
    colBands: d3.range(drawn.data.shape[1]).map((c) => HEAD_COLORS[Math.floor(c / D) % HEAD_COLORS.length]),
  });
  renderLegend(section(host, 'legend', 'legends'), divergingScale(maxAbs(p.concat.data)), tr('walk.fig.legend.value'), 'concat');
}
