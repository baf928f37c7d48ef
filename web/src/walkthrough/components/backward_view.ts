// Stages of the backward pass: rows of gradient matrices joined by operators (render layer: draws
// the step's props, computes nothing). Each gradient gets its own diverging colour scale, so a
// small gradient is as readable as a large one; hover gives the exact float32 and the step's detail.
import type { Tensor } from '../../engine/protocol';
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

export function renderBackward(host: HTMLElement, p: BackwardProps) {
  for (const r of p.rows) {
    const row = section(host, r.name);
    r.items.forEach(({ op, matrix: m }, n) => {
      if (op) operator(row, op, `${r.name}-op${n}`);
      const scale = m.kind === 'weight' ? sequentialScale(1) : divergingScale(maxAbs(m.data.data) || 1);
      renderMatrix(row, { ...m, scale, cell: p.cell, digits: m.digits ?? 3 });
    });
  }
  const legends = section(host, 'legend', 'legends');
  renderLegend(legends, divergingScale(1), tr('fig.grad.legend'), 'grad');
}
