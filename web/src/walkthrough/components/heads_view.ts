// Stage: per-head maps. Every head's attention weights side by side, grouped by shared K/V head.
import { t as tr } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { renderLegend } from '../../ui/legend';
import { renderMatrix } from '../../ui/matrix';
import { HEAD_COLORS, sequentialScale } from '../../util/color';
import { section } from './common';

export interface HeadsProps {
  tokens: string[];
  keyTokens: string[];
  weights: Tensor[];
  kvOf: number[];
  cell: number;
  /** Heads revealed so far. */
  shown: number;
}

export function renderHeads(host: HTMLElement, p: HeadsProps) {
  const scale = sequentialScale(1);
  const row = section(host, 'heads', 'eqn heads');
  // GQA / MQA: the query heads that read one K/V head are drawn inside one box, labelled with it.
  const shared = new Set(p.kvOf).size < p.kvOf.length;
  const parentOf = (h: number) => {
    if (!shared) return row;
    const g = p.kvOf[h];
    const members = p.kvOf.flatMap((k, q) => (k === g ? [q] : []));
    const box = section(row, `kv-group-${g}`, 'kv-group');
    box.dataset.kvHead = String(g);
    const label = section(box, 'kv-label', 'kv-label');
    label.textContent = tr('walk.fig.kvShared', { g, heads: members.join(', ') });
    return box;
  };
  p.weights.forEach((w, h) => {
    const wrap = section(parentOf(h), `head-${h}`, `head-wrap${h < p.shown ? ' shown' : ''}`);
    wrap.style.setProperty('--head', HEAD_COLORS[h % HEAD_COLORS.length]);
    renderMatrix(wrap, {
      name: `heads-weights-h${h}`,
      title: tr('walk.step.heads.caption', { h }),
      caption: p.kvOf.length > 1 && new Set(p.kvOf).size < p.kvOf.length ? `reads K/V head ${p.kvOf[h]}` : '',
      data: w,
      scale,
      cell: p.cell,
      rowLabels: h === 0 ? p.tokens : undefined,
      colLabels: p.keyTokens,
    });
  });
  renderLegend(section(host, 'legend', 'legends'), scale, tr('walk.fig.legend.weight'), 'heads');
}
