// §7 series: a Transformer forecaster trained in the worker (sinusoidal or time-aware positions):
// its forecast of a held-out series beside the truth and the seasonal-naive baseline.
import * as d3 from 'd3';
import { t } from '../../i18n';
import { HEAD_COLORS } from '../../util/color';
import { exactFloat32, fmt } from '../../util/format';
import { figureExport, note } from './draw';
import { defineFigure } from './figure';
import type { ForecastFigure, ForecastRequest } from './forecast.compute';

export const forecastFigure = defineFigure({
  id: 'forecast',
  controls: [{ name: 'pos', label: 'ch.fig.forecast.pos', values: ['time', 'sinusoidal'], value: 'time' }],
  trained: true,
  request: (v) => ({ figure: 'forecast', positional: v('pos') as ForecastRequest['positional'], steps: 300, seed: 1 }),
  draw: (host, d) => drawForecast(host, d),
});

/**
 * §7 series: the held-out series' context, then over the horizon the truth, the trained
 * forecaster's model.forecast and the seasonal-naive baseline, each forecast point carrying its
 * exact value (data-value) for the test that compares it with the engine.
 */
function drawForecast(host: HTMLElement, d: ForecastFigure) {
  const T = d.context.length;
  const horizon = d.truth.length;
  const result = t('ch.fig.forecast.result', { pe: t(d.positional === 'time' ? 'ch.fig.forecast.pe.time' : 'ch.fig.forecast.pe.sinusoidal'), steps: d.steps, mse: fmt(d.mse, 3), base: fmt(d.baselineMse, 3), mae: fmt(d.mae, 3), baseMae: fmt(d.baselineMae, 3) });
  note(host, result, { mse: d.mse, baselineMse: d.baselineMse, positional: d.positional });
  const w = Math.min(640, Math.max(300, host.clientWidth || 600));
  const h = 240;
  const m = { top: 30, right: 12, bottom: 34, left: 44 };
  const all = [...d.context, ...d.truth, ...d.forecast, ...d.baseline];
  // Steps relative to the last context step (0): the context is ≤ 0, the forecast 1..horizon.
  const at = (i: number) => i - (T - 1);
  const x = d3.scaleLinear().domain([at(0), at(T + horizon - 1)]).range([m.left, w - m.right]);
  const y = d3.scaleLinear().domain([Math.min(...all), Math.max(...all)]).nice().range([h - m.bottom, m.top]);
  const title = t('ch.fig.forecast.title', { T, horizon });
  const fig = d3.select(host).append('figure').attr('class', 'chart').attr('data-chart', 'forecast');
  fig.append('figcaption').attr('class', 'matrix-title').append('span').attr('class', 't').text(title);
  const svg = fig.append('svg').attr('width', w).attr('height', h).attr('role', 'img')
    .attr('aria-label', `${title}. ${result}`);
  svg.append('g').attr('transform', `translate(0,${h - m.bottom})`).call(d3.axisBottom(x).ticks(6));
  svg.append('g').attr('transform', `translate(${m.left},0)`).call(d3.axisLeft(y).ticks(5));
  svg.append('text').attr('x', (m.left + w) / 2).attr('y', h - 4).attr('text-anchor', 'middle').attr('class', 'fig-label').text(t('ch.fig.forecast.time'));
  // Where the forecast starts.
  svg.append('line').attr('x1', x(0.5)).attr('x2', x(0.5)).attr('y1', m.top).attr('y2', h - m.bottom).attr('class', 'edge').attr('stroke-dasharray', '3,3');
  const line = d3.line<[number, number]>().x((p) => x(p[0])).y((p) => y(p[1]));
  // The horizon's lines start at the last context value, so each reads as a continuation.
  const last: [number, number] = [0, d.context[T - 1]];
  const ahead = (v: number[]) => [last, ...v.map((yv, j): [number, number] => [j + 1, yv])];
  const kinds = [
    ['context', d.context.map((yv, i): [number, number] => [at(i), yv]), '#888', '', t('ch.fig.forecast.context')],
    ['truth', ahead(d.truth), HEAD_COLORS[1], '', t('ch.fig.forecast.truth')],
    ['baseline', ahead(d.baseline), HEAD_COLORS[0], '5,3', t('ch.fig.forecast.baseline')],
    ['forecast', ahead(d.forecast), HEAD_COLORS[2], '', t('ch.fig.forecast.forecast')],
  ] as const;
  kinds.forEach(([name, pts, color, dash, label], i) => {
    svg.append('path').attr('d', line(pts as [number, number][])).attr('fill', 'none').attr('stroke', color).attr('stroke-width', name === 'context' ? 1.2 : 2).attr('stroke-dasharray', dash || null).attr('data-line', name);
    if (name !== 'context') {
      const values = name === 'truth' ? d.truth : name === 'baseline' ? d.baseline : d.forecast;
      values.forEach((v, j) => {
        svg.append('circle').attr('cx', x(j + 1)).attr('cy', y(v)).attr('r', name === 'forecast' ? 3 : 2.2).attr('fill', color)
          .attr('class', 'pt').attr('data-series', name).attr('data-step', j).attr('data-value', exactFloat32(v))
          .append('title').text(`${label}, +${j + 1}: ${fmt(v, 4)}`);
      });
    }
    const lx = m.left + 6 + i * Math.floor((w - m.left - m.right) / 4);
    svg.append('rect').attr('x', lx).attr('y', 8).attr('width', 12).attr('height', 4).attr('fill', color);
    svg.append('text').attr('x', lx + 16).attr('y', 14).attr('class', 'fig-label').text(label);
  });
  figureExport(fig.node()!, svg.node()!, 'attnlab-forecast');
  note(host, t('ch.fig.forecast.note'));
}
