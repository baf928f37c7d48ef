// Stage: output. concat · W_Oᵀ (+ b_O) = output, one row per token, back at width C.
import { t as tr } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { renderLegend } from '../../ui/legend';
import { operator, renderMatrix } from '../../ui/matrix';
import { divergingScale, maxAbs } from '../../util/color';
import { exactFloat32 } from '../../util/format';
import { firstCells, idx, section, shape } from './common';

export interface OutputProps {
  tokens: string[];
  concat: Tensor;
  woT: Tensor;
  output: Tensor;
  cell: number;
  activeRow: number | null;
  terms(i: number, j: number): { terms: number[]; sum: number; bias: number };
}

export function renderOutput(host: HTMLElement, p: OutputProps) {
  const [T, C] = p.output.shape;
  const scale = divergingScale(maxAbs(p.concat.data, p.woT.data, p.output.data));
  const hi = p.activeRow == null ? [] : [p.activeRow];
  const row = section(host, 'output');
  const concat = firstCells(p.concat, { cols: true });
  const woT = firstCells(p.woT, { rows: true, cols: true });
  const output = firstCells(p.output, { cols: true });
  renderMatrix(row, { name: 'out-concat', title: tr('walk.fig.concat'), caption: shape(T, C) + concat.note, data: concat.data, scale, cell: p.cell, rowLabels: p.tokens, highlightRows: hi });
  operator(row, '×', 'times');
  renderMatrix(row, { name: 'out-w', title: 'W_Oᵀ', caption: shape(C, C) + woT.note, data: woT.data, scale, cell: p.cell, rowLabels: idx(woT.data.shape[0], 'c'), colLabels: idx(woT.data.shape[1], 'c') });
  operator(row, '=', 'eq');
  renderMatrix(row, {
    name: 'output',
    title: tr('walk.fig.output'),
    caption: shape('T', 'C') + ' = ' + shape(T, C) + output.note,
    data: output.data,
    scale,
    cell: p.cell,
    rowLabels: p.tokens,
    colLabels: idx(output.data.shape[1], 'c'),
    highlightRows: hi,
    pending: p.activeRow == null ? undefined : (i) => i > (p.activeRow as number),
    detail: (i, j, v) => {
      const t = p.terms(i, j);
      return `<div class="terms">Σ<sub>c</sub> concat[i][c]·W_Oᵀ[c][j] = ${t.terms.map((x) => exactFloat32(Math.fround(x))).join(' + ')}</div><div class="muted">${tr('walk.fig.tt.sum')} ${(t.sum + t.bias).toPrecision(7)} · ${tr('walk.fig.tt.engine')} ${exactFloat32(v)}</div>`;
    },
  });
  renderLegend(section(host, 'legend', 'legends'), scale, tr('walk.fig.legend.value'), 'output');
}
