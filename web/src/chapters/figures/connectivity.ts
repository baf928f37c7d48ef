// §9: who position i sees under a convolution (a fixed neighbourhood), a recurrence (its
// predecessor) and attention (every position, with the engine's weights of the chain's layer).
import * as d3 from 'd3';
import { t, type Key } from '../../i18n';
import { exactFloat32 } from '../../util/format';
import { note } from './draw';
import { defineFigure } from './figure';

export const connectivityFigure = defineFigure({
  id: 'connectivity',
  controls: [],
  request: () => ({ figure: 'chain', T: 8, seed: 3 }),
  draw(host, d) {
    const weights = d.weights;
    const T = weights.shape[0];
    const i = Math.floor(T / 2);
    const w = Math.min(620, Math.max(300, host.clientWidth || 600));
    const xs = (k: number) => 24 + (k * (w - 48)) / (T - 1);
    const svg = d3.select(host).append('figure').attr('class', 'chart').attr('data-chart', 'connectivity').append('svg').attr('width', w).attr('height', 260).attr('role', 'img').attr('aria-label', t('ch.fig.connectivity.title', { i }));
    const rows: [Key, (j: number) => number][] = [
      ['ch.fig.connectivity.conv', (j) => (Math.abs(j - i) <= 1 ? 1 : 0)],
      ['ch.fig.connectivity.rnn', (j) => (j === i - 1 ? 1 : 0)],
      ['ch.fig.connectivity.attn', (j) => weights.data[i * T + j]],
    ];
    rows.forEach(([label, weight], r) => {
      const y = 60 + r * 80;
      svg.append('text').attr('x', 8).attr('y', y - 34).attr('class', 'fig-label').text(t(label));
      for (let j = 0; j < T; j++) {
        const wj = weight(j);
        if (wj > 0 && j !== i) svg.append('line').attr('x1', xs(j)).attr('y1', y).attr('x2', xs(i)).attr('y2', y - 22).attr('class', 'edge attn').attr('stroke-width', 0.5 + 5 * wj).attr('data-weight', exactFloat32(wj));
        svg.append('circle').attr('cx', xs(j)).attr('cy', y).attr('r', 7).attr('class', j === i ? 'node self' : 'node');
      }
      svg.append('circle').attr('cx', xs(i)).attr('cy', y - 22).attr('r', 5).attr('class', 'node out');
    });
    note(host, t('ch.fig.connectivity.title', { i }));
  },
});
