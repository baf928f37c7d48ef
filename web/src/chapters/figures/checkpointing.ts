// §6: gradient checkpointing keeps only each block's input for backward: the engine's bytes per
// depth, without and with it (grouped bars, MiB).
import * as d3 from 'd3';
import { t } from '../../i18n';
import { HEAD_COLORS } from '../../util/color';
import { fmt } from '../../util/format';
import { figureExport, note } from './draw';
import { defineFigure } from './figure';

export const checkpointingFigure = defineFigure({
  id: 'checkpointing',
  controls: [],
  request: () => ({ figure: 'checkpointing', depths: [2, 4, 8, 16], dModel: 64, numHeads: 4, seqLen: 128, batch: 8 }),
  draw(host, d) {
    const w = Math.min(560, Math.max(300, host.clientWidth || 560));
    const h = 220;
    const m = { top: 28, right: 10, bottom: 36, left: 56 };
    const mib = (b: number) => b / 2 ** 20;
    const x = d3.scaleBand().domain(d.rows.map((r) => String(r.layers))).range([m.left, w - m.right]).padding(0.25);
    const y = d3.scaleLinear().domain([0, mib(Math.max(...d.rows.map((r) => r.full)))]).nice().range([h - m.bottom, m.top]);
    const title = t('ch.fig.checkpointing.title', { T: d.seqLen, B: d.batch, C: d.dModel });
    const fig = d3.select(host).append('figure').attr('class', 'chart').attr('data-chart', 'checkpointing');
    fig.append('figcaption').attr('class', 'matrix-title').append('span').attr('class', 't').text(title);
    const svg = fig.append('svg').attr('width', w).attr('height', h).attr('role', 'img').attr('aria-label', `${title}: ${d.rows.map((r) => `${r.layers}: ${fmt(mib(r.full), 2)} / ${fmt(mib(r.checkpointed), 2)} MiB`).join('; ')}`);
    svg.append('g').attr('transform', `translate(0,${h - m.bottom})`).call(d3.axisBottom(x));
    svg.append('g').attr('transform', `translate(${m.left},0)`).call(d3.axisLeft(y).ticks(5));
    svg.append('text').attr('x', (m.left + w) / 2).attr('y', h - 4).attr('text-anchor', 'middle').attr('class', 'fig-label').text(t('ch.fig.checkpointing.layers'));
    svg.append('text').attr('transform', `translate(12,${(h - m.bottom + m.top) / 2}) rotate(-90)`).attr('text-anchor', 'middle').attr('class', 'fig-label').text('MiB');
    const bw = x.bandwidth() / 2;
    const kinds = [['full', HEAD_COLORS[2], t('ch.fig.checkpointing.without')], ['checkpointed', HEAD_COLORS[0], t('ch.fig.checkpointing.with')]] as const;
    for (const r of d.rows)
      kinds.forEach(([k, color], i) => {
        svg.append('rect').attr('x', x(String(r.layers))! + i * bw).attr('width', bw - 1).attr('y', y(mib(r[k]))).attr('height', y(0) - y(mib(r[k])))
          .attr('fill', color).attr('data-layers', r.layers).attr('data-kind', k).attr('data-bytes', r[k]).append('title').text(`${r.layers}: ${fmt(mib(r[k]), 3)} MiB`);
      });
    kinds.forEach(([, color, label], i) => {
      svg.append('rect').attr('x', m.left + 8 + i * 170).attr('y', 6).attr('width', 12).attr('height', 12).attr('fill', color);
      svg.append('text').attr('x', m.left + 24 + i * 170).attr('y', 16).attr('class', 'fig-label').text(label);
    });
    figureExport(fig.node()!, svg.node()!, 'attnlab-checkpointing');
    const last = d.rows[d.rows.length - 1];
    note(host, t('ch.fig.checkpointing.note', { L: last.layers, full: fmt(mib(last.full), 2), kept: fmt(mib(last.checkpointed), 2), x: (last.full / last.checkpointed).toFixed(1) }));
  },
});
