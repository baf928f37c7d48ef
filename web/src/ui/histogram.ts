// Overlaid histograms (e.g. scores before/after scaling). Bins come from the layout layer.
import * as d3 from 'd3';

export interface HistSeries {
  label: string;
  color: string;
  bins: { x0: number; x1: number; count: number }[];
}

export function renderHistogram(host: HTMLElement, name: string, title: string, series: HistSeries[], domain: [number, number], width = 320, height = 150) {
  const m = { top: 8, right: 10, bottom: 30, left: 34 };
  let fig = d3.select(host).select<HTMLElement>(`figure[data-hist="${name}"]`);
  if (fig.empty()) {
    fig = d3.select(host).append('figure').attr('class', 'hist').attr('data-hist', name);
    fig.append('figcaption').attr('class', 'matrix-title');
    const svg = fig.append('svg');
    svg.append('g').attr('class', 'bars');
    svg.append('g').attr('class', 'xaxis');
    svg.append('g').attr('class', 'yaxis');
    fig.append('div').attr('class', 'hist-keys');
  }
  fig.select('figcaption').html(`<span class="t">${title}</span>`);
  const svg = fig.select('svg').attr('width', width).attr('height', height);
  const x = d3.scaleLinear().domain(domain).range([m.left, width - m.right]);
  const ymax = d3.max(series.flatMap((s) => s.bins.map((b) => b.count))) ?? 1;
  const y = d3.scaleLinear().domain([0, ymax]).nice().range([height - m.bottom, m.top]);
  const groups = svg
    .select('g.bars')
    .selectAll<SVGGElement, HistSeries>('g.series')
    .data(series, (d) => d.label)
    .join('g')
    .attr('class', 'series')
    .attr('fill', (d) => d.color)
    .attr('fill-opacity', 0.55);
  groups
    .selectAll<SVGRectElement, { x0: number; x1: number; count: number }>('rect')
    .data((d) => d.bins)
    .join('rect')
    .attr('x', (b) => x(b.x0) + 0.5)
    .attr('width', (b) => Math.max(0, x(b.x1) - x(b.x0) - 1))
    .transition()
    .duration(400)
    .attr('y', (b) => y(b.count))
    .attr('height', (b) => y(0) - y(b.count));
  svg.select<SVGGElement>('g.xaxis').attr('transform', `translate(0,${height - m.bottom})`).call(d3.axisBottom(x).ticks(6));
  svg.select<SVGGElement>('g.yaxis').attr('transform', `translate(${m.left},0)`).call(d3.axisLeft(y).ticks(4));
  fig
    .select('.hist-keys')
    .selectAll('span')
    .data(series)
    .join('span')
    .html((d) => `<i style="background:${d.color}"></i>${d.label}`);
}
