// §1: a recurrent chain beside all-to-all attention over the same tokens: token 1 reaches token n
// after n − 1 hand-overs, while every pair of attention is one step apart (edge width = the
// engine's weight).
import * as d3 from 'd3';
import { t } from '../../i18n';
import { sequentialScale } from '../../util/color';
import { exactFloat32 } from '../../util/format';
import { cellFor, figureExport, matrix } from './draw';
import { defineFigure } from './figure';

export const chainFigure = defineFigure({
  id: 'chain',
  controls: [],
  request: () => ({ figure: 'chain', T: 8, seed: 3 }),
  draw(host, d) {
    const T = d.weights.shape[0];
    const w = Math.min(620, Math.max(300, host.clientWidth || 600));
    const chart = d3.select(host).append('figure').attr('class', 'chart').attr('data-chart', 'chain');
    const svg = chart.append('svg').attr('width', w).attr('height', 250).attr('role', 'img').attr('aria-label', t('ch.fig.chain.title'));
    const xs = (i: number) => 24 + (i * (w - 48)) / (T - 1);
    const g1 = svg.append('g');
    g1.append('text').attr('x', 8).attr('y', 18).attr('class', 'fig-label').text(t('ch.fig.chain.rnn', { n: T, steps: T - 1 }));
    for (let i = 0; i < T - 1; i++) g1.append('line').attr('x1', xs(i) + 8).attr('x2', xs(i + 1) - 8).attr('y1', 50).attr('y2', 50).attr('class', 'edge').attr('marker-end', '');
    for (let i = 0; i < T; i++) g1.append('circle').attr('cx', xs(i)).attr('cy', 50).attr('r', 8).attr('class', 'node');
    const g2 = svg.append('g');
    g2.append('text').attr('x', 8).attr('y', 100).attr('class', 'fig-label').text(t('ch.fig.chain.attn'));
    const y0 = 230;
    for (let i = 0; i < T; i++)
      for (let j = 0; j < T; j++) {
        if (i === j) continue;
        const wij = d.weights.data[i * T + j];
        const a = xs(i), b = xs(j);
        const h = Math.abs(a - b) * 0.45;
        g2.append('path').attr('d', `M${a},${y0} Q${(a + b) / 2},${y0 - h} ${b},${y0}`).attr('class', 'edge attn').attr('stroke-width', 0.4 + 5 * wij).attr('stroke-opacity', 0.25 + 0.6 * wij).attr('data-weight', exactFloat32(wij));
      }
    for (let i = 0; i < T; i++) g2.append('circle').attr('cx', xs(i)).attr('cy', y0).attr('r', 8).attr('class', 'node');
    figureExport(chart.node()!, svg.node()!, 'attnlab-chain');
    matrix(host, 'chain-weights', 'softmax(QKᵀ/√d)', d.weights, sequentialScale(1), { cell: cellFor(host, T, 30) });
  },
});
