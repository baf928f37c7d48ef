// Line charts (experiment curves, live loss): D3 axes, one colour-blind-safe colour per line,
// log axes on request, gaps where y is null. Render layer: draws its props, computes nothing.
import * as d3 from 'd3';
import { HEAD_COLORS } from '../util/color';

/** Dash patterns that, with the colours, tell up to HEAD_COLORS.length × DASHES.length lines apart. */
const DASHES = [null, '6 3', '2 2', '8 3 2 3'];

/**
 * A legend key's swatch drawn as its line is: a short bar in the line's colour, broken into the
 * line's dash pattern (an HTML element, so a figure's only SVG stays its drawing). export.ts reads
 * the colour and dash back from data-color and data-dash.
 */
export function swatchHtml(color: string, dash: string | null): string {
  let fill = color;
  if (dash) {
    const lengths = dash.split(/[\s,]+/).map(Number);
    let at = 0;
    const stops = lengths.map((len, i) => {
      const stop = `${i % 2 === 0 ? color : 'transparent'} ${at}px ${at + len}px`;
      at += len;
      return stop;
    });
    fill = `repeating-linear-gradient(to right, ${stops.join(', ')})`;
  }
  return `<i class="swatch-line" data-color="${color}"${dash ? ` data-dash="${dash}"` : ''} style="background:${fill}"></i>`;
}

/** The colour and dash of line i: the colours first, then each colour again with the next dash. */
export function lineStyle(i: number): { color: string; dash: string | null } {
  return { color: HEAD_COLORS[i % HEAD_COLORS.length], dash: DASHES[Math.floor(i / HEAD_COLORS.length) % DASHES.length] };
}

export interface Line {
  name: string;
  x: (number | null)[];
  y: (number | null)[];
}

export interface LineChartProps {
  /** data-chart attribute (tests and exports find charts by it). */
  name: string;
  title: string;
  xLabel: string;
  yLabel: string;
  lines: Line[];
  logX?: boolean;
  logY?: boolean;
  width?: number;
  height?: number;
}

/** True when every value is > 0 and they span at least two decades (worth a log axis). */
export function wantsLog(values: (number | null)[]): boolean {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x));
  if (!v.length || v.some((x) => x <= 0)) return false;
  return Math.max(...v) / Math.min(...v) >= 100;
}

/** A sweep whose values grow by one factor ≥ 1.5 (n = 128, 256, 512, …): two or more positive values. */
export function geometric(values: (number | null)[]): boolean {
  if (values.length < 2 || values.some((x) => x === null || !(x > 0))) return false;
  const v = values as number[];
  const r = v[1] / v[0];
  return r >= 1.5 && v.every((x, i) => i === 0 || Math.abs(x / v[i - 1] / r - 1) < 0.01);
}

/** Positive, never falling, and at least 1.5x higher at the end: a cost that grows with the sweep. */
const grows = (y: (number | null)[]) => {
  const v = y.filter((x): x is number => x !== null && Number.isFinite(x));
  return v.length >= 2 && v[0] > 0 && v.every((x, i) => i === 0 || x >= v[i - 1]) && v[v.length - 1] >= 1.5 * v[0];
};

/**
 * Log axes of a result's curves: x when it spans two decades or is a geometric sweep; y when it
 * spans two decades, or when x is a geometric sweep and every line grows along it (time, memory,
 * FLOPs vs n: log-log, where a cost n^p is a line of slope p). A falling curve (an accuracy) keeps
 * a linear y.
 */
export function logAxes(x: (number | null)[], lines: (number | null)[][]): { logX: boolean; logY: boolean } {
  const sweep = geometric(x);
  return { logX: wantsLog(x) || sweep, logY: wantsLog(lines.flat()) || (sweep && lines.length > 0 && lines.every(grows)) };
}

/**
 * Sets an axis label's text, broken into lines of at most `room` px (one tspan each, the later
 * ones below the first in the label's own frame), and returns the number of lines. The x label
 * uses one line unless its words do not fit; a hidden chart (nothing measured) keeps one line.
 */
function wrapLabel(label: d3.Selection<SVGTextElement, unknown, null, undefined>, text: string, room: number): number {
  const node = label.attr('font-size', 11).text(text).node();
  if (!node || node.getComputedTextLength() <= room) return 1;
  const words = text.split(/\s+/);
  label.text('');
  const lines: string[] = [];
  let line = '';
  const probe = label.append('tspan');
  for (const w of words) {
    const next = line ? `${line} ${w}` : w;
    probe.text(next);
    if (line && probe.node()!.getComputedTextLength() > room) {
      lines.push(line);
      line = w;
    } else line = next;
  }
  lines.push(line);
  probe.remove();
  // The label's anchor is its first line's baseline; the others follow below it, in its own frame.
  lines.forEach((l, i) => label.append('tspan').attr('x', 0).attr('dy', i === 0 ? '0' : '1.1em').text(l));
  return lines.length;
}

export function renderLineChart(host: HTMLElement, p: LineChartProps): SVGSVGElement {
  // The room the chart has: its host's width, or (a host just added, still empty) its parent's, so
  // a phone's 310 px column gets a 310 px chart rather than a cut 420 px one.
  const room = host.clientWidth || host.parentElement?.clientWidth || 420;
  const width = Math.min(p.width ?? 420, Math.max(240, room));
  const height = p.height ?? 220;
  // right: half of a tick label such as "20,000" centred on the last tick; left: the y tick labels
  // and, left of them, the rotated y label in as many lines as it needs (set below).
  const m = { top: 10, right: 22, bottom: 38, left: 58 };
  let fig = d3.select(host).select<HTMLElement>(`figure[data-chart="${p.name}"]`);
  if (fig.empty()) {
    fig = d3.select(host).append('figure').attr('class', 'chart').attr('data-chart', p.name);
    fig.append('figcaption').attr('class', 'matrix-title');
    const svg = fig.append('svg').attr('role', 'img');
    svg.append('g').attr('class', 'xaxis');
    svg.append('g').attr('class', 'yaxis');
    svg.append('g').attr('class', 'lines');
    svg.append('text').attr('class', 'xlabel');
    svg.append('text').attr('class', 'ylabel');
    fig.append('div').attr('class', 'hist-keys');
  }
  fig.select('figcaption').html(`<span class="t"></span>`).select('.t').text(p.title);
  const svg = fig.select<SVGSVGElement>('svg').attr('width', width).attr('height', height).attr('aria-label', `${p.title}: ${p.yLabel} vs ${p.xLabel}`);
  const yLines = wrapLabel(svg.select<SVGTextElement>('text.ylabel'), p.yLabel, height - m.top - m.bottom);
  m.left = 46 + 12 * yLines;
  const xLines = wrapLabel(svg.select<SVGTextElement>('text.xlabel'), p.xLabel, width - 20);
  m.bottom = 26 + 12 * xLines;
  const pts = p.lines.flatMap((l) => l.x.map((x, i) => [x, l.y[i]] as const)).filter((d): d is readonly [number, number] => d[0] !== null && d[1] !== null && Number.isFinite(d[1]));
  const xs = pts.map((d) => d[0]);
  const ys = pts.map((d) => d[1]);
  const xDom = (xs.length ? d3.extent(xs) : [0, 1]) as [number, number];
  const yDom = (ys.length ? d3.extent(ys) : [0, 1]) as [number, number];
  if (xDom[0] === xDom[1]) xDom[1] = xDom[0] + 1;
  if (yDom[0] === yDom[1]) yDom[1] = yDom[0] + 1;
  const x = (p.logX ? d3.scaleLog() : d3.scaleLinear()).domain(xDom).range([m.left, width - m.right]);
  const y = (p.logY ? d3.scaleLog() : d3.scaleLinear()).domain(yDom).nice().range([height - m.bottom, m.top]);
  svg.select<SVGGElement>('g.xaxis').attr('transform', `translate(0,${height - m.bottom})`).call(d3.axisBottom(x).ticks(5, p.logX ? '~g' : undefined));
  svg.select<SVGGElement>('g.yaxis').attr('transform', `translate(${m.left},0)`).call(d3.axisLeft(y).ticks(5, p.logY ? '~g' : undefined));
  svg.select('text.xlabel').attr('transform', `translate(${width / 2},${height - m.bottom + 34})`).attr('text-anchor', 'middle');
  svg.select('text.ylabel').attr('transform', `translate(12,${(m.top + height - m.bottom) / 2}) rotate(-90)`).attr('text-anchor', 'middle');
  const line = d3
    .line<[number | null, number | null]>()
    .defined((d) => d[0] !== null && d[1] !== null && Number.isFinite(d[1]))
    .x((d) => x(d[0]!))
    .y((d) => y(d[1]!));
  svg
    .select('g.lines')
    .selectAll<SVGPathElement, Line>('path')
    .data(p.lines, (d) => d.name)
    .join('path')
    .attr('fill', 'none')
    .attr('stroke-width', 1.8)
    .attr('stroke', (_, i) => lineStyle(i).color)
    .attr('stroke-dasharray', (_, i) => lineStyle(i).dash)
    .attr('data-line', (d) => d.name)
    .attr('d', (d) => line(d.x.map((xv, i) => [xv, d.y[i]])));
  // One key per line, its swatch a short stroke drawn as the line is (colour and dash). Only the
  // keys themselves are selected: each key holds a span of its own.
  fig
    .select('.hist-keys')
    .selectAll<HTMLSpanElement, Line>(':scope > span.key')
    .data(p.lines)
    .join('span')
    .attr('class', 'key')
    .attr('data-key', (d) => d.name)
    .html((_, i) => swatchHtml(lineStyle(i).color, lineStyle(i).dash))
    .append('span')
    .text((d) => d.name);
  return svg.node()!;
}
