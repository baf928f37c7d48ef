// Stage: projections. x · W_Qᵀ = q (and k, v) for one head; one output cell at a time is animated.
import { t as tr } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { renderLegend } from '../../ui/legend';
import { operator, renderMatrix } from '../../ui/matrix';
import { divergingScale, maxAbs } from '../../util/color';
import { exactFloat32 } from '../../util/format';
import { firstCells, idx, section, shape } from './common';

export interface ProjectionRow {
  /** 'q' | 'k' | 'v' */
  which: string;
  weightName: string;
  /** The head's slice of Wᵀ: (C, D). */
  weightT: Tensor;
  /** The engine's stage for this head: (T, D). */
  out: Tensor;
  headLabel: string;
  /** Cross-attention's k and v: the matrix projected (the context, (S, C)), its name and row labels; absent = x. */
  input?: Tensor;
  inputName?: string;
  inputTokens?: string[];
  /** The output rows' dimension letter ('T' unless the input is the context: 'S'). */
  rowsName?: string;
  /** Product terms of a cell, for the tooltip. */
  terms(i: number, j: number): { terms: number[]; sum: number; bias: number };
}

export interface ProjectionProps {
  tokens: string[];
  x: Tensor;
  rows: ProjectionRow[];
  cell: number;
  /** The (row, row-index i, column j) being computed by the animation, or null when at rest. */
  active: { row: number; i: number; j: number } | null;
  /** Cells of row `active.row` computed so far (row-major count); others faded. */
  computed: number;
}

function termsHtml(t: { terms: number[]; sum: number; bias: number }, v: number) {
  const list = t.terms.map((x) => exactFloat32(Math.fround(x))).join(' + ');
  return `<div class="terms">Σ<sub>c</sub> x[i][c]·Wᵀ[c][j] = ${list}${t.bias ? ` + ${tr('walk.fig.tt.bias')} ${exactFloat32(t.bias)}` : ''}</div><div class="muted">${tr('walk.fig.tt.sum')} ${(t.sum + t.bias).toPrecision(7)} · ${tr('walk.fig.tt.engine')} ${exactFloat32(v)}</div>`;
}

export function renderProjections(host: HTMLElement, p: ProjectionProps) {
  const C = p.x.shape[1];
  const scale = divergingScale(maxAbs(p.x.data, ...p.rows.flatMap((r) => [r.weightT.data, r.out.data, ...(r.input ? [r.input.data] : [])])));
  p.rows.forEach((r, k) => {
    const D = r.out.shape[1];
    const a = p.active && p.active.row === k ? p.active : null;
    const row = section(host, `proj-${r.which}`);
    const input = firstCells(r.input ?? p.x, { cols: true });
    const weight = firstCells(r.weightT, { rows: true });
    const rowLabels = r.inputTokens ?? p.tokens;
    renderMatrix(row, {
      name: `proj-x-${r.which}`,
      title: r.inputName ?? 'x',
      caption: shape((r.input ?? p.x).shape[0], C) + input.note,
      data: input.data,
      scale,
      cell: p.cell,
      rowLabels,
      highlightRows: a ? [a.i] : [],
    });
    operator(row, '×', 'times');
    renderMatrix(row, {
      name: `proj-w-${r.which}`,
      title: `${r.weightName}ᵀ ${r.headLabel}`,
      caption: shape('C', 'D') + ' = ' + shape(C, D) + weight.note,
      data: weight.data,
      scale,
      cell: p.cell,
      rowLabels: idx(weight.data.shape[0], 'c'),
      highlightCols: a ? [a.j] : [],
    });
    operator(row, '=', 'eq');
    renderMatrix(row, {
      name: `${r.which}-h`,
      title: `${r.which} ${r.headLabel}`,
      caption: shape(r.rowsName ?? 'T', 'D') + ' = ' + shape(r.out.shape[0], D),
      data: r.out,
      scale,
      cell: p.cell,
      rowLabels,
      colLabels: idx(D, 'd'),
      highlightCells: a ? [[a.i, a.j]] : [],
      pending: p.active && p.active.row === k ? (i, j) => i * D + j > p.computed : undefined,
      detail: (i, j, v) => termsHtml(r.terms(i, j), v),
    });
  });
  renderLegend(section(host, 'legend', 'legends'), scale, tr('walk.fig.legend.signed'), 'proj');
}
