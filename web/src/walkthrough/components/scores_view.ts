// Stage: scores. q · kᵀ = S; hovering S[i][j] lights up q_i and k_j and lists the products.
import { t as tr } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { renderLegend } from '../../ui/legend';
import { operator, renderMatrix } from '../../ui/matrix';
import { divergingScale, maxAbs } from '../../util/color';
import { exactFloat32 } from '../../util/format';
import { idx, section, shape } from './common';

export interface ScoresProps {
  tokens: string[];
  keyTokens: string[];
  q: Tensor;
  kT: Tensor;
  scores: Tensor;
  qName: string;
  kName: string;
  headLabel: string;
  cell: number;
  focus: [number, number] | null;
  /** Cells computed so far in the animation (row-major), or null when at rest. */
  computed: number | null;
  terms(i: number, j: number): { terms: number[]; sum: number };
  onHover(cell: [number, number] | null): void;
}

export function renderScores(host: HTMLElement, p: ScoresProps) {
  const [T, D] = p.q.shape;
  const S = p.kT.shape[1];
  const vecScale = divergingScale(maxAbs(p.q.data, p.kT.data));
  const sScale = divergingScale(maxAbs(p.scores.data));
  const f = p.focus;
  const row = section(host, 'scores');
  renderMatrix(row, { name: 'scores-q', title: `${p.qName} ${p.headLabel}`, caption: shape('T', 'D') + ' = ' + shape(T, D), data: p.q, scale: vecScale, cell: p.cell, rowLabels: p.tokens, highlightRows: f ? [f[0]] : [] });
  operator(row, '×', 'times');
  renderMatrix(row, { name: 'scores-kT', title: `${p.kName}ᵀ`, caption: shape('D', 'S') + ' = ' + shape(D, S), data: p.kT, scale: vecScale, cell: p.cell, rowLabels: idx(D, 'd'), colLabels: p.keyTokens, highlightCols: f ? [f[1]] : [] });
  operator(row, '=', 'eq');
  renderMatrix(row, {
    name: 'scores',
    title: tr('walk.fig.scoresS'),
    caption: shape('T', 'S') + ' = ' + shape(T, S),
    data: p.scores,
    scale: sScale,
    cell: p.cell,
    rowLabels: p.tokens,
    colLabels: p.keyTokens,
    highlightCells: f ? [f] : [],
    pending: p.computed == null ? undefined : (i, j) => i * S + j > (p.computed as number),
    onHover: p.onHover,
    detail: (i, j, v) => {
      const t = p.terms(i, j);
      return `<div class="terms">q<sub>${i}</sub>·k<sub>${j}</sub> = ${t.terms.map((x) => exactFloat32(Math.fround(x))).join(' + ')}</div><div class="muted">${tr('walk.fig.tt.sum')} ${t.sum.toPrecision(7)} · ${tr('walk.fig.tt.engine')} ${exactFloat32(v)}</div>`;
    },
  });
  const legends = section(host, 'legend', 'legends');
  renderLegend(legends, vecScale, tr('walk.fig.legend.qk'), 'qk');
  renderLegend(legends, sScale, tr('walk.fig.legend.score'), 'scores');
}
