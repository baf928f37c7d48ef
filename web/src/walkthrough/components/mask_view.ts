// Stage: mask. scaled -> masked: forbidden (query, key) pairs become −∞ (hatched).
import { t as tr } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { renderLegend } from '../../ui/legend';
import { operator, renderMatrix } from '../../ui/matrix';
import { divergingScale, maxAbs } from '../../util/color';
import { section, shape } from './common';

export interface MaskProps {
  tokens: string[];
  keyTokens: string[];
  scaled: Tensor;
  masked: Tensor;
  cell: number;
  /** Rows revealed so far by the animation (all when at rest). */
  rowsShown: number;
}

export function renderMask(host: HTMLElement, p: MaskProps) {
  const [T, S] = p.masked.shape;
  const scale = divergingScale(maxAbs(p.scaled.data));
  const isMasked = (i: number, j: number) => p.masked.data[i * S + j] === -Infinity;
  const row = section(host, 'mask');
  renderMatrix(row, { name: 'mask-scaled', title: tr('walk.fig.scaled'), caption: shape(T, S), data: p.scaled, scale, cell: p.cell, rowLabels: p.tokens, colLabels: p.keyTokens });
  operator(row, '→', 'arrow');
  renderMatrix(row, {
    name: 'masked',
    title: tr('ui.masked'),
    caption: shape(T, S),
    data: p.masked,
    scale,
    cell: p.cell,
    rowLabels: p.tokens,
    colLabels: p.keyTokens,
    masked: isMasked,
    pending: (i) => i >= p.rowsShown,
  });
  renderLegend(section(host, 'legend', 'legends'), scale, tr('walk.fig.legend.masked'), 'mask');
}
