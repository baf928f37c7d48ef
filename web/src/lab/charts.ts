// Live loss / accuracy curves (render layer). Draws whatever series the lab store holds.
import * as d3 from 'd3';

export interface CurvePoint {
  step: number;
  value: number;
}

/** Smallest value a log axis extends to (float32 losses below it are rounding noise). */
const LOG_FLOOR = 1e-7;

export function renderCurve(host: HTMLElement, name: string, title: string, points: CurvePoint[], totalSteps: number, opts: { log?: boolean; max?: number; color: string }) {
  // The host's width when shown; a hidden host (clientWidth 0) gets the narrowest chart, and the
  // view redraws when the host is resized (shown).
  const width = Math.max(260, Math.min(520, host.clientWidth || 260));
  const height = 190;
  const m = { top: 10, right: 12, bottom: 28, left: 52 }; // left: room for '0.0001'
  let fig = d3.select(host).select<HTMLElement>(`figure[data-curve="${name}"]`);
  if (fig.empty()) {
    fig = d3.select(host).append('figure').attr('class', 'curve').attr('data-curve', name);
    const caption = fig.append('figcaption').attr('class', 'matrix-title');
    caption.append('span').attr('class', 't');
    caption.append('span').attr('class', 'c');
    const svg = fig.append('svg');
    svg.append('clipPath').attr('id', `curve-clip-${name}`).append('rect');
    svg.append('g').attr('class', 'xaxis');
    svg.append('g').attr('class', 'yaxis');
    svg.append('path').attr('class', 'line').attr('clip-path', `url(#curve-clip-${name})`);
  }
  const last = points.length ? points[points.length - 1].value : NaN;
  // Text, not HTML: this runs several times a second while training.
  fig.select('figcaption .t').text(title);
  fig.select('figcaption .c').text(!Number.isFinite(last) ? '—' : last !== 0 && Math.abs(last) < 1e-3 ? last.toExponential(2) : last.toFixed(4));
  const svg = fig.select('svg').attr('width', width).attr('height', height);
  const x = d3.scaleLinear().domain([0, Math.max(1, totalSteps)]).range([m.left, width - m.right]);
  // A log axis follows the data down (a loss of 1e-5 is a fact worth seeing), to LOG_FLOOR at
  // most; the clip keeps anything beyond the domain inside the plot, never over the tick labels.
  const vals = points.map((p) => p.value).filter((v) => Number.isFinite(v) && (!opts.log || v > 0));
  const hi = opts.max ?? (d3.max(vals) ?? 1);
  const lo = opts.log ? Math.max(LOG_FLOOR, Math.min(d3.min(vals) ?? 0.01, hi / 10)) : 0;
  const y = opts.log
    ? d3.scaleLog().domain([lo, Math.max(hi, lo * 10)]).range([height - m.bottom, m.top]).nice()
    : d3.scaleLinear().domain([lo, hi || 1]).range([height - m.bottom, m.top]).nice();
  svg.select('clipPath rect').attr('x', m.left).attr('y', m.top - 2).attr('width', width - m.left - m.right).attr('height', height - m.top - m.bottom + 4);
  svg.select<SVGGElement>('g.xaxis').attr('transform', `translate(0,${height - m.bottom})`).call(d3.axisBottom(x).ticks(5));
  svg.select<SVGGElement>('g.yaxis').attr('transform', `translate(${m.left},0)`).call(d3.axisLeft(y).ticks(4, opts.log ? '~g' : undefined));
  const line = d3
    .line<CurvePoint>()
    .defined((p) => Number.isFinite(p.value) && (!opts.log || p.value > 0))
    .x((p) => x(p.step))
    .y((p) => y(Math.max(p.value, y.domain()[0])));
  svg.select('path.line').attr('fill', 'none').attr('stroke', opts.color).attr('stroke-width', 1.8).attr('d', line(points) ?? '');
}
