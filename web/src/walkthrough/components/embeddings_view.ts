// Stage: embeddings (+ positions). E, optionally + P = x, all signed heat-maps on one scale.
import { t as tr } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { renderLegend } from '../../ui/legend';
import { operator, renderMatrix } from '../../ui/matrix';
import { divergingScale, maxAbs } from '../../util/color';
import { firstCells, idx, section, shape } from './common';

export interface EmbeddingsProps {
  tokens: string[];
  embeddings: Tensor;
  /** Positional table added by the engine (sinusoidal), or null. */
  positions: Tensor | null;
  /** The engine's stage x (what attention actually reads). */
  x: Tensor;
  cell: number;
  highlightRow: number | null;
}

export function renderEmbeddings(host: HTMLElement, p: EmbeddingsProps) {
  const [T, C] = p.x.shape;
  const scale = divergingScale(maxAbs(p.embeddings.data, p.x.data, p.positions?.data ?? []));
  const row = section(host, 'emb');
  const common = { scale, cell: p.cell, colLabels: idx(C, 'c'), highlightRows: p.highlightRow == null ? [] : [p.highlightRow] };
  if (!p.positions) {
    // Nothing is added: what attention reads (the engine's stage x) is the token vectors themselves.
    const x = firstCells(p.x, { cols: true });
    renderMatrix(row, { name: 'x', title: tr('walk.fig.xTokenVectors'), caption: shape('T', 'C') + ' = ' + shape(T, C) + x.note, data: x.data, rowLabels: p.tokens, ...common, colLabels: idx(x.data.shape[1], 'c') });
  } else {
    renderMatrix(row, { name: 'embeddings', title: tr('walk.fig.tokenVectorsE'), caption: shape('T', 'C') + ' = ' + shape(T, C), data: p.embeddings, rowLabels: p.tokens, ...common });
    operator(row, '+', 'plus');
    renderMatrix(row, { name: 'positions', title: tr('walk.fig.positionsP'), caption: shape(T, C), data: p.positions, rowLabels: idx(T, 'pos '), ...common });
    operator(row, '=', 'eq');
    renderMatrix(row, { name: 'x', title: 'x = E + P', caption: shape(T, C), data: p.x, rowLabels: p.tokens, ...common });
  }
  renderLegend(section(host, 'legend', 'legends'), scale, tr('walk.fig.legend.signed'), 'emb');
}
