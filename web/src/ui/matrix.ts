// A labelled heat-map matrix with the value printed in each cell (render layer: draws props,
// computes nothing). Cells carry data-i / data-j / data-value (the exact float32) for hover and tests.
import { t as tr } from '../i18n';
import * as d3 from 'd3';
import type { Tensor } from '../engine/protocol/messages';
import type { ColorScale } from '../util/color';
import { cellText, exactFloat32 } from '../util/format';
import { hideTooltip, moveTooltip, showTooltip, showTooltipFor } from './tooltip';

export interface MatrixProps {
  /** Stable name, e.g. "weights-h1" (data-matrix attribute; tests find matrices by it). */
  name: string;
  title: string;
  /** Under the title, e.g. "(T, D) = (3, 4)". */
  caption?: string;
  /** An engine stage's matrix may carry `flushed`: its cells rounding flushed to ±0, marked like ±∞. */
  data: Tensor & { flushed?: ArrayLike<number> };
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
  /** exactFloat32(v), computed once per render (data-value, aria-label and tooltip use it). */
  exact: string;
  /** cellText(v, digits): the number as the cell prints it. */
  text: string;
  masked: boolean;
  /** Underflow (fp16/bf16): a non-zero result the rounding turned into ±0, as the engine noted it. */
  flushed: boolean;
}

/** What the delegated cell events of a figure use: the props and cells of its latest render. */
interface Live {
  p: MatrixProps;
  R: number;
  K: number;
  tip: (d: Cell) => string;
  aria: (d: Cell) => string;
}
const live = new WeakMap<HTMLElement, Live>();

const LABEL_FONT = 12;
/** Longest label drawn, in Latin-letter widths; longer ones end in "…" (the cells' tooltips name it in full). */
const MAX_LABEL_EMS = 14;
/** The smallest font a cell's number is printed in; below it the number is left to the tooltip. */
const MIN_CELL_FONT = 8;
const MAX_CELL_FONT = 13;
/** Column labels are drawn rotated by this many degrees (up and to the right). */
const COL_LABEL_ANGLE = 40;
const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });
/** Characters drawn about a full em wide (CJK, Hangul, emoji) rather than ~0.58 em. */
const WIDE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Extended_Pictographic}\u3000-\u303f\uff00-\uffef]/u;

/** Width of `s` in Latin-letter widths (a wide character counts as 1.7). */
function ems(s: string): number {
  let w = widths.get(s);
  if (w === undefined) {
    w = 0;
    for (const { segment } of graphemes.segment(s)) w += WIDE.test(segment) ? 1.7 : 1;
    if (widths.size > 4096) widths.clear();
    widths.set(s, w);
  }
  return w;
}
/** Labels repeat across matrices and renders, and segmenting them is what measuring costs. */
const widths = new Map<string, number>();

/** `s` cut to at most MAX_LABEL_EMS letter widths, ending in "…" when cut. */
function fitLabel(s: string): string {
  let fitted = fitted_.get(s);
  if (fitted === undefined) {
    fitted = s;
    if (ems(s) > MAX_LABEL_EMS) {
      let out = '';
      for (const { segment } of graphemes.segment(s)) {
        if (ems(out + segment) > MAX_LABEL_EMS - 1) break;
        out += segment;
      }
      fitted = `${out}…`;
    }
    if (fitted_.size > 4096) fitted_.clear();
    fitted_.set(s, fitted);
  }
  return fitted;
}
const fitted_ = new Map<string, string>();

/** A 2D context that measures label text in the labels' own font (null where there is no canvas). */
let measurer: CanvasRenderingContext2D | null | undefined;
const measured = new Map<string, number>();

/**
 * The drawn width of a label (px): measured in the page's sans font at LABEL_FONT, so wide letters
 * ("m=0") get their room; the letter-width estimate where nothing can measure.
 */
function labelPx(s: string): number {
  const text = fitLabel(s);
  // The font follows the page's language (html:lang(zh-CN) has its own --sans).
  const lang = typeof document !== 'undefined' ? document.documentElement.lang : '';
  const key = `${lang}|${text}`;
  let w = measured.get(key);
  if (w !== undefined) return w;
  if (measurer === undefined) measurer = typeof document !== 'undefined' ? document.createElement('canvas').getContext('2d') : null;
  if (measurer) {
    const family = getComputedStyle(document.body ?? document.documentElement).getPropertyValue('--sans').trim();
    measurer.font = `${LABEL_FONT}px ${family || 'sans-serif'}`;
  }
  w = Math.max(ems(text) * LABEL_FONT * 0.58, measurer ? measurer.measureText(text).width : 0);
  if (measured.size > 4096) measured.clear();
  measured.set(key, w);
  return w;
}

export function matrixSize(p: Pick<MatrixProps, 'data' | 'cell' | 'rowLabels' | 'colLabels' | 'rightLabels' | 'rightTitle' | 'colBands'>) {
  const [R, K] = p.data.shape;
  const left = p.rowLabels ? labelWidth(p.rowLabels) + 8 : 0;
  const rad = (COL_LABEL_ANGLE * Math.PI) / 180;
  // Rotated column labels rise by their width's sine plus their height's cosine.
  const top = p.colLabels ? labelWidth(p.colLabels) * Math.sin(rad) + LABEL_FONT * Math.cos(rad) + 8 : p.rightTitle || p.colBands ? 18 : 0;
  const right = p.rightLabels ? 52 : 0;
  // Rotated column labels reach right of their column: keep the last ones inside the figure, so
  // they cannot run into what follows it (an operator, the next matrix).
  const reach = Math.max(0, ...(p.colLabels ?? []).map((l, j) => (j + 0.5) * p.cell + labelPx(l) * Math.cos(rad) + LABEL_FONT * Math.sin(rad) - K * p.cell));
  return { width: left + K * p.cell + Math.max(right, reach) + 2, height: top + R * p.cell + 6, left, top };
}

function labelWidth(labels: string[]): number {
  return Math.max(0, ...labels.map(labelPx), LABEL_FONT * 0.58);
}

/**
 * The font size (px) at which the widest number of `texts` fits inside a cell's square (cell − 2)
 * with a pixel to spare each side, or 0 when no readable size does. Digits, point and minus of the
 * monospace font are 0.6 em wide.
 */
function cellFont(cell: number, texts: string[]): number {
  const chars = Math.max(1, ...texts.map((t) => t.length));
  const f = Math.min(MAX_CELL_FONT, (cell - 5) / (chars * 0.6));
  return f >= MIN_CELL_FONT ? f : 0;
}

/** '+inf', '-inf' (unless masked: a mask's -inf is by design) or 'nan' for a value to mark, else null. */
function nonFinite(v: number, masked: boolean): string | null {
  if (Number.isNaN(v)) return 'nan';
  if (v === Infinity) return '+inf';
  if (v === -Infinity && !masked) return '-inf';
  return null;
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
  const flushed = new Set(Array.from(p.data.flushed ?? []));
  const cells: Cell[] = [];
  for (let i = 0; i < R; i++) {
    for (let j = 0; j < K; j++) {
      const v = p.data.data[i * K + j];
      cells.push({ i, j, v, exact: exactFloat32(v), text: cellText(v, digits), masked: p.masked?.(i, j) ?? false, flushed: flushed.has(i * K + j) });
    }
  }
  const fontSize = cellFont(p.cell, cells.map((d) => d.text));
  const showText = fontSize > 0;
  const hidden = showText ? '' : `<span class="c numbers-hidden">${tr('ui.numbersHidden')}</span>`;
  fig.select('figcaption').html(`<span class="t">${p.title}</span>${p.caption ? `<span class="c">${p.caption}</span>` : ''}${hidden}`);
  const svg = fig.select<SVGSVGElement>('svg').attr('width', size.width).attr('height', size.height).attr('data-rows', R).attr('data-cols', K);

  const hiR = new Set(p.highlightRows ?? []);
  const hiC = new Set(p.highlightCols ?? []);
  const hiCell = new Set((p.highlightCells ?? []).map(([i, j]) => `${i},${j}`));

  // What every cell's number shares (size, anchoring) is set once on the grid and inherited.
  const grid = svg
    .selectAll<SVGGElement, null>('g.grid')
    .data([null])
    .join('g')
    .attr('class', 'grid')
    .attr('transform', `translate(${size.left},${size.top})`)
    .attr('font-size', fontSize)
    .attr('text-anchor', 'middle')
    .attr('dominant-baseline', 'central');

  // A new cell takes its colour at once; a cell that stays fades to its new colour. Only the
  // cells that stay animate, so a step that draws many new matrices costs one frame of DOM work.
  // New cells are clones of one prototype, and an attribute is written only when it differs from
  // what the cell was last given (see put), so a re-render that changes little (a hover, a
  // highlight) writes little.
  const hatch = `M2,${p.cell - 2} L${p.cell - 2},2 M2,${p.cell / 2} L${p.cell / 2},2 M${p.cell / 2},${p.cell - 2} L${p.cell - 2},${p.cell / 2}`;
  const entered = new Set<SVGGElement>();
  const g = grid
    .selectAll<CellElement, Cell>('g.cell')
    .data(cells, (d) => `${d.i},${d.j}`)
    .join((enter) =>
      enter
        .append((d) => {
          const el = cellPrototype().cloneNode(true) as CellElement;
          el.setAttribute('data-i', String(d.i));
          el.setAttribute('data-j', String(d.j));
          entered.add(el);
          return el;
        }),
    );
  const figEl = fig.node() as HTMLElement;
  // Keyboard: one Tab stop per matrix (roving tabindex); arrows move between cells, and a focused
  // cell shows the same tooltip as hovering it.
  const at = (figEl.dataset.focus ?? '0,0').split(',').map(Number);
  const active = at[0] < R && at[1] < K ? at : [0, 0];
  figEl.dataset.focus = active.join(',');
  const title = p.title.replace(/<[^>]*>/g, '');
  const ariaOf = (d: Cell) => tr('ui.cellAria', { title, i: d.i, row: p.rowLabels?.[d.i] ?? d.i, j: d.j, col: p.colLabels?.[d.j] ?? d.j, v: d.exact });
  const inner = String(p.cell - 2);
  const middle = String(p.cell / 2);
  g.each(function (d) {
    const cell = this;
    const nf = nonFinite(d.v, d.masked);
    const hi = hiR.has(d.i) || hiC.has(d.j) || hiCell.has(`${d.i},${d.j}`);
    put(cell, 'transform', `translate(${d.j * p.cell},${d.i * p.cell})`);
    put(cell, 'data-value', d.exact);
    // Overflow and NaN (an emulated fp16/bf16 run): +inf, -inf that no mask put there, NaN.
    put(cell, 'data-masked', d.masked ? '1' : null);
    put(cell, 'data-nonfinite', nf);
    put(cell, 'data-flushed', d.flushed ? '1' : null);
    let cls = 'cell';
    if (nf !== null) cls += ' nonfinite';
    if (d.flushed) cls += ' flushed';
    if (hi) cls += ' hi';
    if (hiCell.has(`${d.i},${d.j}`)) cls += ' focus';
    if (p.pending?.(d.i, d.j)) cls += ' pending';
    put(cell, 'class', cls);
    // Only the matrix's Tab stop carries its label; moving the focus labels the next cell.
    const isActive = d.i === active[0] && d.j === active[1];
    put(cell, 'tabindex', isActive ? '0' : '-1');
    put(cell, 'aria-label', isActive ? ariaOf(d) : null);
    const [rect, text] = cell.children as unknown as [CellPart & SVGRectElement, CellPart & SVGTextElement];
    put(rect, 'width', inner);
    put(rect, 'height', inner);
    const fill = p.scale.color(d.v);
    const target = rect as SVGRectElement & { fillTarget?: string };
    if (entered.has(cell)) rect.setAttribute('fill', fill);
    else if (target.fillTarget !== fill) d3.select(rect).transition().duration(350).attr('fill', fill);
    target.fillTarget = fill;
    put(text, 'x', middle);
    put(text, 'y', middle);
    put(text, 'fill', p.scale.ink(d.v));
    const shown = showText ? d.text : '';
    if (text.shown !== shown) text.textContent = text.shown = shown;
    // The hatch of a masked cell: a path only where a mask is.
    if (d.masked) {
      if (!cell.hatch) {
        cell.hatch = cell.appendChild(document.createElementNS(SVG_NS, 'path'));
        cell.hatch.setAttribute('class', 'hatch');
      }
      put(cell.hatch, 'd', hatch);
    } else if (cell.hatch) {
      cell.hatch.remove();
      cell.hatch = undefined;
    }
  });
  const tip = (d: Cell) => {
    const label = `${p.rowLabels?.[d.i] ?? tr('ui.tt.row', { i: d.i })} · ${p.colLabels?.[d.j] ?? tr('ui.tt.col', { j: d.j })}`;
    const extra = p.detail ? p.detail(d.i, d.j, d.v) : '';
    return (
      `<div class="tt-head">${p.title} [${d.i}][${d.j}] <span class="muted">${label}</span></div>` +
      `<div class="tt-val">${d.exact}</div>${d.masked ? `<div class="muted">${tr('ui.masked')}</div>` : ''}` +
      `${d.flushed ? `<div class="muted">${tr('ui.flushed')}</div>` : ''}${extra}`
    );
  };
  if (!live.has(figEl)) listenToCells(figEl);
  live.set(figEl, { p, R, K, tip, aria: ariaOf });

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
    .text((d) => fitLabel(d));
  svg
    .selectAll<SVGTextElement, string>('text.clabel')
    .data(p.colLabels ?? [])
    .join('text')
    .attr('class', 'clabel')
    .attr('transform', (_, j) => `translate(${size.left + j * p.cell + p.cell / 2},${size.top - 6}) rotate(-${COL_LABEL_ANGLE})`)
    .attr('text-anchor', 'start')
    .classed('hi', (_, j) => hiC.has(j))
    .text((d) => fitLabel(d));
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

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An element of a cell, with the attribute values it was last given (put) and its printed number. */
type CellPart = Element & {
  drawn?: Record<string, string | null>;
  shown?: string;
};
/** A cell's group: <g class="cell"> holding its rect, its text and, where masked, a hatch path. */
type CellElement = SVGGElement & CellPart & {
  hatch?: CellPart & SVGPathElement;
};

/**
 * Sets (or, for null, removes) an attribute unless the element already holds that value from an
 * earlier put. Every attribute that a render or a key press can change goes through it, so the
 * record stays the truth; the rect's fill, which a transition animates, is tracked apart
 * (fillTarget), and data-i / data-j never change once a clone has them.
 */
function put(el: CellPart, name: string, value: string | null) {
  const drawn = (el.drawn ??= {});
  if (drawn[name] === value) return;
  drawn[name] = value;
  if (value === null) el.removeAttribute(name);
  else el.setAttribute(name, value);
}

/** The cell every new cell is cloned from: what no datum changes is set here once. */
let prototypeCell: SVGGElement | null = null;
function cellPrototype(): SVGGElement {
  if (!prototypeCell) {
    prototypeCell = document.createElementNS(SVG_NS, 'g');
    prototypeCell.setAttribute('class', 'cell');
    prototypeCell.setAttribute('role', 'img');
    const rect = prototypeCell.appendChild(document.createElementNS(SVG_NS, 'rect'));
    rect.setAttribute('rx', '2');
    rect.setAttribute('x', '1');
    rect.setAttribute('y', '1');
    prototypeCell.appendChild(document.createElementNS(SVG_NS, 'text'));
  }
  return prototypeCell;
}

/** The cell under an event of a matrix figure, with its datum (the latest render's). */
function cellOf(ev: Event): { el: SVGGElement; d: Cell } | null {
  const el = (ev.target as Element | null)?.closest?.('g.cell') as SVGGElement | null;
  if (!el) return null;
  return { el, d: d3.select<SVGGElement, Cell>(el).datum() };
}

/**
 * The cells' hover, focus and keyboard events, listened to once per figure on the figure itself
 * (cells come and go with every render; their handlers read the figure's latest props).
 */
function listenToCells(figEl: HTMLElement) {
  let hovered: SVGGElement | null = null;
  const leave = () => {
    if (!hovered) return;
    hovered = null;
    hideTooltip();
    live.get(figEl)?.p.onHover?.(null);
  };
  figEl.addEventListener('mouseover', (ev) => {
    const c = cellOf(ev);
    if (!c) return leave();
    if (c.el === hovered) return;
    const l = live.get(figEl)!;
    hovered = c.el;
    showTooltip(l.tip(c.d), ev, c.el);
    l.p.onHover?.([c.d.i, c.d.j]);
  });
  figEl.addEventListener('mousemove', (ev) => {
    if (hovered) moveTooltip(ev);
  });
  figEl.addEventListener('mouseleave', leave);
  figEl.addEventListener('focusin', (ev) => {
    const c = cellOf(ev);
    if (!c) return;
    const l = live.get(figEl)!;
    figEl.dataset.focus = `${c.d.i},${c.d.j}`;
    showTooltipFor(l.tip(c.d), c.el);
    l.p.onHover?.([c.d.i, c.d.j]);
  });
  figEl.addEventListener('focusout', (ev) => {
    if (!cellOf(ev)) return;
    hideTooltip();
    live.get(figEl)?.p.onHover?.(null);
  });
  figEl.addEventListener('keydown', (ev) => {
    const c = cellOf(ev);
    if (!c) return;
    const { R, K, aria } = live.get(figEl)!;
    const { d } = c;
    const move: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    let to: [number, number] | null = null;
    if (move[ev.key]) to = [d.i + move[ev.key][0], d.j + move[ev.key][1]];
    else if (ev.key === 'Home') to = [d.i, 0];
    else if (ev.key === 'End') to = [d.i, K - 1];
    if (!to) return;
    // The arrows belong to the matrix while a cell has focus (not to the step player).
    ev.preventDefault();
    ev.stopPropagation();
    const [i, j] = [Math.max(0, Math.min(R - 1, to[0])), Math.max(0, Math.min(K - 1, to[1]))];
    const next = figEl.querySelector<SVGGElement>(`g.cell[data-i="${i}"][data-j="${j}"]`);
    if (!next || next === c.el) return;
    put(c.el, 'tabindex', '-1');
    put(c.el, 'aria-label', null);
    put(next, 'tabindex', '0');
    put(next, 'aria-label', aria(d3.select<SVGGElement, Cell>(next).datum()));
    // The Tab stop moves here, not only on the focusin that follows: a render that runs between
    // the two (a browser that delivers focus events late) keeps this cell as the Tab stop.
    figEl.dataset.focus = `${i},${j}`;
    next.focus();
  });
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
