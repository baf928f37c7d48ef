// Live loss / accuracy curves (render layer). Draws whatever series the lab store holds.
import * as d3 from 'd3';

export interface CurvePoint {
  step: number;
  value: number;
}

export function renderCurve(host: HTMLElement, name: string, title: string, points: CurvePoint[], totalSteps: number, opts: { log?: boolean; max?: number; color: string }) {
  const width = Math.max(260, Math.min(520, host.clientWidth || 420));
  const height = 190;
  const m = { top: 10, right: 12, bottom: 28, left: 44 };
  let fig = d3.select(host).select<HTMLElement>(`figure[data-curve="${name}"]`);
  if (fig.empty()) {
    fig = d3.select(host).append('figure').attr('class', 'curve').attr('data-curve', name);
    const caption = fig.append('figcaption').attr('class', 'matrix-title');
    caption.append('span').attr('class', 't');
    caption.append('span').attr('class', 'c');
    const svg = fig.append('svg');
    svg.append('g').attr('class', 'xaxis');
    svg.append('g').attr('class', 'yaxis');
    svg.append('path').attr('class', 'line');
  }
  const last = points.length ? points[points.length - 1].value : NaN;
  // Text, not HTML: this runs several times a second while training.
  fig.select('figcaption .t').text(title);
  fig.select('figcaption .c').text(Number.isFinite(last) ? last.toFixed(4) : '—');
  const svg = fig.select('svg').attr('width', width).attr('height', height);
  const x = d3.scaleLinear().domain([0, Math.max(1, totalSteps)]).range([m.left, width - m.right]);
  const vals = points.map((p) => p.value).filter(Number.isFinite);
  const hi = opts.max ?? (d3.max(vals) ?? 1);
  const lo = opts.log ? Math.max(1e-3, d3.min(vals) ?? 0.01) : 0;
  const y = opts.log
    ? d3.scaleLog().domain([lo, Math.max(hi, lo * 10)]).range([height - m.bottom, m.top]).nice()
    : d3.scaleLinear().domain([lo, hi || 1]).range([height - m.bottom, m.top]).nice();
  svg.select<SVGGElement>('g.xaxis').attr('transform', `translate(0,${height - m.bottom})`).call(d3.axisBottom(x).ticks(5));
  svg.select<SVGGElement>('g.yaxis').attr('transform', `translate(${m.left},0)`).call(d3.axisLeft(y).ticks(4, opts.log ? '~g' : undefined));
  const line = d3
    .line<CurvePoint>()
    .defined((p) => Number.isFinite(p.value) && (!opts.log || p.value > 0))
    .x((p) => x(p.step))
    .y((p) => y(p.value));
  svg.select('path.line').attr('fill', 'none').attr('stroke', opts.color).attr('stroke-width', 1.8).attr('d', line(points) ?? '');
}
