// A colour bar with ticks for one colour scale (render layer).
import * as d3 from 'd3';
import type { ColorScale } from '../util/color';

export function renderLegend(host: HTMLElement, scale: ColorScale, label: string, name: string) {
  const width = 180;
  const height = 10;
  let fig = d3.select(host).select<HTMLDivElement>(`div.legend[data-legend="${name}"]`);
  if (fig.empty()) {
    fig = d3.select(host).append('div').attr('class', 'legend').attr('data-legend', name);
    fig.append('div').attr('class', 'legend-label');
    const svg = fig.append('svg').attr('width', width + 24).attr('height', height + 18);
    svg.append('defs').append('linearGradient').attr('id', `lg-${name}`);
    svg.append('rect').attr('class', 'bar').attr('x', 12).attr('y', 0).attr('width', width).attr('height', height).attr('rx', 2);
    svg.append('g').attr('class', 'axis').attr('transform', `translate(12,${height + 2})`);
  }
  fig.select('.legend-label').text(label);
  const [lo, hi] = scale.domain;
  const stops = d3.range(0, 1.0001, 0.1).map((t) => ({ t, c: scale.color(lo + t * (hi - lo)) }));
  fig
    .select(`#lg-${name}`)
    .selectAll('stop')
    .data(stops)
    .join('stop')
    .attr('offset', (d) => `${d.t * 100}%`)
    .attr('stop-color', (d) => d.c);
  fig.select('rect.bar').attr('fill', `url(#lg-${name})`);
  const x = d3.scaleLinear().domain([lo, hi]).range([0, width]);
  const ticks = scale.kind === 'diverging' ? [lo, 0, hi] : [lo, (lo + hi) / 2, hi];
  fig
    .select<SVGGElement>('g.axis')
    .call(d3.axisBottom(x).tickValues(ticks).tickSize(3).tickFormat((d) => d3.format('.2~f')(d as number).replace('-', '−')));
}
