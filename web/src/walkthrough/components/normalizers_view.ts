// The same masked scores under every normaliser (render layer): one weight matrix per normaliser
// side by side, each the engine's own trace with that normaliser (attention/normalizer.hpp).
import type { Normalizer } from '../../../attnlab';
import { CHOICES } from '../../../generated/choices.mjs';
import { t as tr } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { renderMatrix } from '../../ui/matrix';
import { sequentialScale } from '../../util/color';
import { section, shape } from './common';

export interface NormalizersProps {
  tokens: string[];
  keyTokens: string[];
  /** (T, S) weights of the shown head under each normaliser. */
  weights: Record<Normalizer, Tensor>;
  /** The one the layer runs with (drawn first and named). */
  current: Normalizer;
  masked: (i: number, j: number) => boolean;
  cell: number;
}

export function renderNormalizers(host: HTMLElement, p: NormalizersProps) {
  const title = section(host, 'norm-title', 'note');
  title.textContent = tr('walk.fig.norm.title');
  const row = section(host, 'normalizers');
  const max = Math.max(1, ...CHOICES.Normalizer.flatMap((n) => Array.from(p.weights[n].data).filter(Number.isFinite)));
  for (const n of CHOICES.Normalizer) {
    const w = p.weights[n];
    renderMatrix(row, {
      name: `norm-${n}`,
      title: tr(`walk.fig.norm.${n}`) + (n === p.current ? ' ✓' : ''),
      caption: shape(w.shape[0], w.shape[1]),
      data: w,
      scale: sequentialScale(max),
      cell: p.cell,
      rowLabels: n === 'softmax' ? p.tokens : undefined,
      colLabels: p.keyTokens,
      masked: p.masked,
    });
  }
}
