// What the figures' drawings share on the page: cell sizes that fit the block, matrices drawn one
// per task (with their summary and export buttons), notes, labels.
import { t } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { exportButtons } from '../../ui/export';
import { renderMatrix } from '../../ui/matrix';
import type { ColorScale } from '../../util/color';
import { fmt } from '../../util/format';

/** The cell size that fits `cols` columns in the block's width (phones get small cells). */
export function cellFor(host: HTMLElement, cols: number, max = 34): number {
  const w = Math.max(280, Math.min(host.clientWidth || 600, 700));
  return Math.max(9, Math.min(max, Math.floor((w - 60) / cols)));
}

/**
 * Matrices are drawn one per task (an SVG matrix of a few hundred cells costs tens of ms): a chapter
 * with many of them never holds the main thread for long. `drawing` collects the renders one
 * figure queued, so the figure can say when it is complete.
 */
const queue: (() => void)[] = [];
let pumping = false;
let drawing: Promise<void>[] = [];
function later(fn: () => void) {
  drawing.push(
    new Promise<void>((resolve) => {
      queue.push(() => {
        fn();
        resolve();
      });
    }),
  );
  if (!pumping) {
    pumping = true;
    setTimeout(pump, 0);
  }
}
function pump() {
  queue.shift()?.();
  if (queue.length) setTimeout(pump, 0);
  else pumping = false;
}

/** Runs `draw` and resolves once every matrix it queued is drawn. */
export function drawAll(draw: () => void): Promise<unknown> {
  const mine = (drawing = []);
  draw();
  return Promise.all(mine);
}

export interface MatrixOptions {
  cell?: number;
  digits?: number;
  rowLabels?: string[];
  colLabels?: string[];
  colBands?: string[];
}

/** A matrix of the figure, in its own cell, drawn in a later task. */
export function matrix(host: HTMLElement, name: string, title: string, data: Tensor, scale: ColorScale, opts: MatrixOptions = {}) {
  const cell = document.createElement('div');
  cell.className = 'fig-cell';
  host.appendChild(cell);
  const K = data.shape[1];
  const size = opts.cell ?? cellFor(host, K);
  later(() => drawMatrix(cell, name, title, data, scale, size, opts));
}

function drawMatrix(cell: HTMLElement, name: string, title: string, data: Tensor, scale: ColorScale, size: number, opts: MatrixOptions) {
  const [R, K] = data.shape;
  renderMatrix(cell, { name, title, data, scale, cell: size, digits: opts.digits ?? 2, rowLabels: opts.rowLabels, colLabels: opts.colLabels, colBands: opts.colBands, masked: (i, j) => !Number.isFinite(data.data[i * K + j]) });
  const svg = cell.querySelector<SVGSVGElement>('svg')!;
  const finite = Array.from(data.data).filter(Number.isFinite);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', t('ch.summary.matrix', { title, rows: R, cols: K, min: fmt(finite.length ? Math.min(...finite) : NaN), max: fmt(finite.length ? Math.max(...finite) : NaN) }));
  figureExport(cell, svg, `attnlab-${name}`);
}

/** The SVG / PNG export buttons of a drawing. */
export const figureExport = (host: HTMLElement, svg: SVGSVGElement, file: string) => exportButtons(host, () => svg, file, { svg: t('ch.export.svg'), png: t('ch.export.png') });

/** A line of text under the figure; attrs become data-* attributes (tests read the exact numbers). */
export function note(host: HTMLElement, text: string, attrs: Record<string, string | number> = {}) {
  const p = document.createElement('p');
  p.className = 'fig-note';
  p.textContent = text;
  for (const [k, v] of Object.entries(attrs)) p.dataset[k] = String(v);
  host.appendChild(p);
}

/** n labels f(0) .. f(n − 1). */
export const range = (n: number, f: (i: number) => string = String) => Array.from({ length: n }, (_, i) => f(i));
