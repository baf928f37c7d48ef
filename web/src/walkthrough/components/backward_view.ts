// Stages of the backward pass: rows of gradient matrices joined by operators (render layer: draws
// the step's props, computes nothing). Each gradient gets its own diverging colour scale, so a
// small gradient is as readable as a large one; hover gives the exact float32 and the step's detail.
import type { Tensor } from '../../engine/protocol/messages';
import { renderLegend } from '../../ui/legend';
import { operator, renderMatrix } from '../../ui/matrix';
import { divergingScale, maxAbs, sequentialScale } from '../../util/color';
import { t as tr } from '../../i18n';
import { section } from './common';

export interface GradMatrix {
  /** data-matrix name, e.g. "grad-scores". */
  name: string;
  title: string;
  caption?: string;
  data: Tensor;
  rowLabels?: string[];
  colLabels?: string[];
  /** Weights (0..1) take the sequential scale; gradients a diverging one around 0. */
  kind?: 'grad' | 'weight';
  highlightRows?: number[];
  masked?: (i: number, j: number) => boolean;
  detail?: (i: number, j: number, v: number) => string;
  rightLabels?: string[];
  rightTitle?: string;
  digits?: number;
}

/** One row of the figure: matrices, each optionally preceded by an operator glyph. */
export interface GradRow {
  name: string;
  items: { op?: string; matrix: GradMatrix }[];
}

export interface BackwardProps {
  rows: GradRow[];
  cell: number;
}

/**
 * Cells drawn in one animation frame before the next rows wait for the following frame (the
 * StepContext's later). A new cell costs style, layout and paint as well as the script that makes
 * it, so a step that drew every row of a large model at once would hold the main thread for one
 * long task; row by row, each frame's task stays well inside the 50 ms the page allows itself
 * (tests/browser/walk_backward.test.mjs measures it).
 */
const CELLS_PER_FRAME = 160;

const cellsOf = (r: GradRow) => r.items.reduce((n, { matrix: m }) => n + m.data.shape[0] * m.data.shape[1], 0);

/** Draws the rows (later ones in later frames, see CELLS_PER_FRAME), then the legend. */
export function renderBackward(host: HTMLElement, later: (draw: () => void) => void, p: BackwardProps) {
  drawRows(host, p, 0, later);
}

function drawRows(host: HTMLElement, p: BackwardProps, from: number, later: (draw: () => void) => void) {
  let cells = 0;
  for (let k = from; k < p.rows.length; k++) {
    const r = p.rows[k];
    if (cells > 0 && cells + cellsOf(r) > CELLS_PER_FRAME) {
      later(() => drawRows(host, p, k, later));
      return;
    }
    cells += cellsOf(r);
    const row = section(host, r.name);
    r.items.forEach(({ op, matrix: m }, n) => {
      if (op) operator(row, op, `${r.name}-op${n}`);
      const scale = m.kind === 'weight' ? sequentialScale(1) : divergingScale(maxAbs(m.data.data) || 1);
      renderMatrix(row, { ...m, scale, cell: p.cell, digits: m.digits ?? 3 });
    });
  }
  const legends = section(host, 'legend', 'legends');
  renderLegend(legends, divergingScale(1), tr('walk.fig.grad.legend'), 'grad');
}
