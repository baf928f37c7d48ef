// A labelled heat-map matrix with the value printed in each cell (render layer: draws props,
// computes nothing). Cells carry data-i / data-j / data-value (the exact float32) for hover and tests.
import * as d3 from 'd3';
import type { Tensor } from '../engine/protocol';
import type { ColorScale } from '../util/color';
import { cellText, exactFloat32 } from '../util/format';
import { hideTooltip, showTooltip } from './tooltip';

export interface MatrixProps {
  /** Stable name, e.g. "weights-h1" (data-matrix attribute; tests find matrices by it). */
  name: string;
  title: string;
  /** Under the title, e.g. "(T, D) = (3, 4)". */
  caption?: string;
  data: Tensor;
  scale: ColorScale;
  cell: number;
  digits?: number;
  rowLabels?: string[];
  colLabels?: string[];
  masked?: (i: number, j: number) => boolean;
  highlightRows?: number[];
  highlightCols?: number[];
  highlightCells?: [number, number][];
  /** Cells drawn faded (e.g. not yet computed in an animation). */
  pending?: (i: number, j: number) => boolean;
  /** Extra HTML for the tooltip of a cell, under the exact value. */
  detail?: (i: number, j: number, v: number) => string;
  onHover?: (cell: [number, number] | null) => void;
  /** Colour strip above columns (e.g. which head a column belongs to). */
  colBands?: string[];
  /** A label column on the right (e.g. row sums). */
  rightLabels?: string[];
  rightTitle?: string;
}

interface Cell {
  i: number;
  j: number;
  v: number;
}

const LABEL_FONT = 12;

export function matrixSize(p: Pick<MatrixProps, 'data' | 'cell' | 'rowLabels' | 'colLabels' | 'rightLabels' | 'rightTitle' | 'colBands'>) {
  const [R, K] = p.data.shape;
  const left = p.rowLabels ? labelWidth(p.rowLabels) + 8 : 0;
  const top = p.colLabels ? Math.min(70, labelWidth(p.colLabels) * 0.72 + 10) : p.rightTitle || p.colBands ? 18 : 0;
  const right = p.rightLabels ? 52 : 0;
  return { width: left + K * p.cell + right + 2, height: top + R * p.cell + 6, left, top };
}

function labelWidth(labels: string[]): number {
  return Math.max(...labels.map((l) => l.length), 1) * LABEL_FONT * 0.58;
}

/** Renders (or updates in place, with transitions) a matrix figure inside `host`. */
export function renderMatrix(host: HTMLElement, p: MatrixProps) {
  const [R, K] = p.data.shape;
  const digits = p.digits ?? 2;
  const size = matrixSize(p);
  let fig = d3.select(host).select<HTMLElement>(`figure[data-matrix="${p.name}"]`);
  if (fig.empty()) {
    fig = d3.select(host).append('figure').attr('class', 'matrix').attr('data-matrix', p.name);
    fig.append('figcaption').attr('class', 'matrix-title');
    fig.append('svg').attr('class', 'matrix-svg');
  }
  fig.select('figcaption').html(`<span class="t">${p.title}</span>${p.caption ? `<span class="c">${p.caption}</span>` : ''}`);
  const svg = fig.select<SVGSVGElement>('svg').attr('width', size.width).attr('height', size.height).attr('data-rows', R).attr('data-cols', K);

  const cells: Cell[] = [];
  for (let i = 0; i < R; i++) for (let j = 0; j < K; j++) cells.push({ i, j, v: p.data.data[i * K + j] });
  const hiR = new Set(p.highlightRows ?? []);
  const hiC = new Set(p.highlightCols ?? []);
  const hiCell = new Set((p.highlightCells ?? []).map(([i, j]) => `${i},${j}`));
  const showText = p.cell >= 24;
  const fontSize = Math.max(9, Math.min(13, p.cell * 0.3));

  const grid = svg
    .selectAll<SVGGElement, null>('g.grid')
    .data([null])
    .join('g')
    .attr('class', 'grid')
    .attr('transform', `translate(${size.left},${size.top})`);

  const g = grid
    .selectAll<SVGGElement, Cell>('g.cell')
    .data(cells, (d) => `${d.i},${d.j}`)
    .join((enter) => {
      const e = enter.append('g').attr('class', 'cell');
      e.append('rect').attr('rx', 2);
      e.append('text').attr('text-anchor', 'middle').attr('dominant-baseline', 'central');
      e.append('path').attr('class', 'hatch');
      return e;
    });
  g.attr('transform', (d) => `translate(${d.j * p.cell},${d.i * p.cell})`)
    .attr('data-i', (d) => d.i)
    .attr('data-j', (d) => d.j)
    .attr('data-value', (d) => exactFloat32(d.v))
    .attr('data-masked', (d) => (p.masked?.(d.i, d.j) ? '1' : null))
    .classed('hi', (d) => hiR.has(d.i) || hiC.has(d.j) || hiCell.has(`${d.i},${d.j}`))
    .classed('focus', (d) => hiCell.has(`${d.i},${d.j}`))
    .classed('pending', (d) => p.pending?.(d.i, d.j) ?? false);
  g.select('rect')
    .attr('width', p.cell - 2)
    .attr('height', p.cell - 2)
    .attr('x', 1)
    .attr('y', 1)
    .transition()
    .duration(350)
    .attr('fill', (d) => p.scale.color(d.v));
  g.select('text')
    .attr('x', p.cell / 2)
    .attr('y', p.cell / 2)
    .attr('font-size', fontSize)
    .attr('fill', (d) => p.scale.ink(d.v))
    .text((d) => (showText ? cellText(d.v, digits) : ''));
  g.select('path.hatch').attr('d', (d) =>
    p.masked?.(d.i, d.j) ? `M2,${p.cell - 2} L${p.cell - 2},2 M2,${p.cell / 2} L${p.cell / 2},2 M${p.cell / 2},${p.cell - 2} L${p.cell - 2},${p.cell / 2}` : null,
  );
  g.on('mouseenter', (ev: MouseEvent, d) => {
    const label = `${p.rowLabels?.[d.i] ?? `row ${d.i}`} · ${p.colLabels?.[d.j] ?? `col ${d.j}`}`;
    const extra = p.detail ? p.detail(d.i, d.j, d.v) : '';
    showTooltip(
      `<div class="tt-head">${p.title} [${d.i}][${d.j}] <span class="muted">${label}</span></div>` +
        `<div class="tt-val">${exactFloat32(d.v)}</div>${p.masked?.(d.i, d.j) ? '<div class="muted">masked</div>' : ''}${extra}`,
      ev,
    );
    p.onHover?.([d.i, d.j]);
  })
    .on('mousemove', (ev: MouseEvent, d) => {
      const t = document.querySelector('.tooltip') as HTMLElement | null;
      if (t && t.style.opacity === '1') showTooltip(t.innerHTML, ev);
      void d;
    })
    .on('mouseleave', () => {
      hideTooltip();
      p.onHover?.(null);
    });

  // Row labels (tokens) on the left, column labels rotated on top.
  svg
    .selectAll<SVGTextElement, string>('text.rlabel')
    .data(p.rowLabels ?? [])
    .join('text')
    .attr('class', 'rlabel')
    .attr('x', size.left - 6)
    .attr('y', (_, i) => size.top + i * p.cell + p.cell / 2)
    .attr('text-anchor', 'end')
    .attr('dominant-baseline', 'central')
    .classed('hi', (_, i) => hiR.has(i))
    .text((d) => d);
  svg
    .selectAll<SVGTextElement, string>('text.clabel')
    .data(p.colLabels ?? [])
    .join('text')
    .attr('class', 'clabel')
    .attr('transform', (_, j) => `translate(${size.left + j * p.cell + p.cell / 2},${size.top - 6}) rotate(-40)`)
    .attr('text-anchor', 'start')
    .classed('hi', (_, j) => hiC.has(j))
    .text((d) => d);
  svg
    .selectAll<SVGRectElement, string>('rect.band')
    .data(p.colBands ?? [])
    .join('rect')
    .attr('class', 'band')
    .attr('x', (_, j) => size.left + j * p.cell + 1)
    .attr('y', size.top - 5)
    .attr('width', p.cell - 2)
    .attr('height', 4)
    .attr('fill', (d) => d);
  const right = svg
    .selectAll<SVGTextElement, string>('text.right')
    .data(p.rightLabels ?? [])
    .join('text')
    .attr('class', 'right')
    .attr('x', size.left + K * p.cell + 8)
    .attr('y', (_, i) => size.top + i * p.cell + p.cell / 2)
    .attr('dominant-baseline', 'central')
    .text((d) => d);
  void right;
  svg
    .selectAll<SVGTextElement, string>('text.right-title')
    .data(p.rightTitle ? [p.rightTitle] : [])
    .join('text')
    .attr('class', 'right-title')
    .attr('x', size.left + K * p.cell + 8)
    .attr('y', size.top - 8)
    .text((d) => d);
}

/** An operator glyph between matrices (×, =, +, →). */
export function operator(host: HTMLElement, glyph: string, name: string) {
  let el = host.querySelector<HTMLElement>(`.op[data-op="${name}"]`);
  if (!el) {
    el = document.createElement('div');
    el.className = 'op';
    el.dataset.op = name;
    host.appendChild(el);
  }
  el.textContent = glyph;
}
