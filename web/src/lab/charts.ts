// Live loss / accuracy curves (render layer). Draws whatever series the lab store holds.
import * as d3 from 'd3';
import { swatchHtml } from '../ui/line_chart';

export interface CurvePoint {
  step: number;
  value: number;
}

/** Smallest value a log axis extends to (float32 losses below it are rounding noise). */
const LOG_FLOOR = 1e-7;

export function renderCurve(host: HTMLElement, name: string, title: string, points: CurvePoint[], totalSteps: number, opts: { log?: boolean; max?: number; color: string }) {
  renderSeries(host, name, title, [{ label: title, color: opts.color, points }], totalSteps, opts);
}

/** One line of a chart: a run's or a head's curve. */
export interface CurveSeries {
  label: string;
  color: string;
  points: CurvePoint[];
  /** Drawn dashed (a compared run, not the current one). */
  dashed?: boolean;
  /** Its own dash pattern (SVG stroke-dasharray), where colours alone repeat. */
  dash?: string | null;
}

/** The stroke-dasharray a series is drawn with. */
const dashOf = (d: CurveSeries) => d.dash ?? (d.dashed ? '5 3' : null);

/**
 * A chart of one or more series over the steps 0..totalSteps. Every chart drawn into the same
 * host shares the x-axis domain, and a pointer over any of them draws the same step's rule and
 * values on all of them (linkCharts).
 */
export function renderSeries(host: HTMLElement, name: string, title: string, series: CurveSeries[], totalSteps: number, opts: { log?: boolean; max?: number; color?: string }) {
  // The host's width when shown; a hidden host (clientWidth 0) gets the narrowest chart, and the
  // view redraws when the host is resized (shown).
  const width = Math.max(260, Math.min(520, host.clientWidth || 260));
  const height = 190;
  // left: room for '0.0001'; right: half of the last tick's label ("20,000") centred on the end.
  const m = { top: 10, right: 24, bottom: 28, left: 52 };
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
    svg.append('g').attr('class', 'lines');
    svg.append('line').attr('class', 'rule').attr('visibility', 'hidden');
    fig.append('div').attr('class', 'curve-keys');
  }
  const main = series[0]?.points ?? [];
  const last = main.length ? main[main.length - 1].value : NaN;
  // Text, not HTML: this runs several times a second while training.
  fig.select('figcaption .t').text(title);
  fig.select('figcaption .c').text(series.length > 1 && series.some((x) => x.label !== series[0].label) ? '' : valueText(last));
  const svg = fig.select('svg').attr('width', width).attr('height', height);
  const x = d3.scaleLinear().domain([0, Math.max(1, totalSteps)]).range([m.left, width - m.right]);
  // A log axis follows the data down (a loss of 1e-5 is a fact worth seeing), to LOG_FLOOR at
  // most; the clip keeps anything beyond the domain inside the plot, never over the tick labels.
  const vals = series.flatMap((sr) => sr.points.map((p) => p.value)).filter((v) => Number.isFinite(v) && (!opts.log || v > 0));
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
  svg
    .select('g.lines')
    .selectAll<SVGPathElement, CurveSeries>('path.line')
    .data(series)
    .join('path')
    .attr('class', 'line')
    .attr('clip-path', `url(#curve-clip-${name})`)
    .attr('data-series', (d) => d.label)
    .attr('fill', 'none')
    .attr('stroke', (d) => d.color)
    .attr('stroke-width', (_, i) => (i === 0 ? 1.8 : 1.4))
    .attr('stroke-dasharray', dashOf)
    .attr('d', (d) => line(d.points) ?? '');
  // Keys only when the lines need telling apart.
  const keys = fig.select('.curve-keys').selectAll<HTMLSpanElement, CurveSeries>('span.key').data(series.length > 1 ? series : []).join('span').attr('class', 'key');
  // A key's swatch is a short stroke drawn as its line is (colour and dash).
  keys.html((d) => `${swatchHtml(d.color, dashOf(d))}${escapeHtml(d.label)}`);
  const el = fig.node() as HTMLElement & { __curve?: CurveGeometry };
  el.__curve = { x, series, top: m.top, bottom: height - m.bottom };
}

interface CurveGeometry {
  x: d3.ScaleLinear<number, number>;
  series: CurveSeries[];
  top: number;
  bottom: number;
}

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
const valueText = (v: number) => (!Number.isFinite(v) ? '—' : v !== 0 && Math.abs(v) < 1e-3 ? v.toExponential(2) : v.toFixed(4));

/** The value of a series at `step` (the last point at or before it), or NaN. */
function valueAt(points: CurvePoint[], step: number): number {
  const i = d3.bisector((p: CurvePoint) => p.step).right(points, step) - 1;
  return i >= 0 ? points[i].value : NaN;
}

/**
 * Links the x-axes of the charts in `host`: the pointer over one chart puts a rule at that step
 * on every chart, and each chart's caption reads its series' values there (data-step on the host).
 */
export function linkCharts(host: HTMLElement) {
  const figures = () => Array.from(host.querySelectorAll<HTMLElement & { __curve?: CurveGeometry }>('figure.curve'));
  const show = (step: number | null) => {
    if (step == null) delete host.dataset.step;
    else host.dataset.step = String(step);
    for (const f of figures()) {
      const g = f.__curve;
      if (!g) continue;
      const rule = d3.select(f).select('line.rule');
      if (step == null) {
        rule.attr('visibility', 'hidden');
        const main = g.series[0]?.points ?? [];
        d3.select(f).select('figcaption .c').text(g.series.length === 1 ? valueText(main.length ? main[main.length - 1].value : NaN) : '');
        continue;
      }
      const px = g.x(step);
      rule.attr('visibility', 'visible').attr('x1', px).attr('x2', px).attr('y1', g.top).attr('y2', g.bottom);
      const readout = g.series.map((s) => `${g.series.length > 1 ? `${s.label} ` : ''}${valueText(valueAt(s.points, step))}`).join(' · ');
      d3.select(f).select('figcaption .c').text(`@${step}: ${readout}`);
    }
  };
  host.addEventListener('pointermove', (ev) => {
    const f = (ev.target as Element).closest<HTMLElement & { __curve?: CurveGeometry }>('figure.curve');
    const svg = f?.querySelector('svg');
    if (!f?.__curve || !svg) return;
    const px = ev.clientX - svg.getBoundingClientRect().left;
    const [a, b] = f.__curve.x.domain();
    show(Math.round(Math.max(a, Math.min(b, f.__curve.x.invert(px)))));
  });
  host.addEventListener('pointerleave', () => show(null));
  return { show };
}
