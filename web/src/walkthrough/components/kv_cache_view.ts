// Generation with a KV cache (render layer): the cache's K rows so far (the rows still to come
// faded), the new token's one query row of weights over them, and what each step costs with the
// cache against recomputing every row, beside linear attention's constant-size state.
import type { KvCacheStep } from '../../../attnlab';
import type { Tensor } from '../../engine/protocol/messages';
import { t as tr } from '../../i18n';
import { operator, renderMatrix } from '../../ui/matrix';
import { divergingScale, maxAbs, sequentialScale } from '../../util/color';
import { idx, section, shape } from './common';

export interface KvCacheProps {
  tokens: string[];
  /** (T, D) the layer's keys of the shown K/V head (the cache holds rows 0..t). */
  k: Tensor;
  steps: KvCacheStep[];
  linear: KvCacheStep[];
  /** The step shown (token t is generated). */
  t: number;
  head: number;
  headLabel: string;
  cell: number;
}

const macs = (n: number) => (n >= 1e6 ? `${(n / 1e6).toPrecision(3)} M` : n >= 1e3 ? `${(n / 1e3).toPrecision(3)} k` : String(Math.round(n)));

export function renderKvCache(host: HTMLElement, p: KvCacheProps) {
  const D = p.k.shape[1];
  const step = p.steps[p.t];
  const row = section(host, 'kv-row');
  renderMatrix(row, {
    name: 'kv-k',
    title: `${tr('walk.fig.kv.cache')} ${p.headLabel}`,
    caption: shape('t+1', 'D') + ' = ' + shape(p.t + 1, D),
    data: p.k,
    scale: divergingScale(maxAbs(p.k.data)),
    cell: p.cell,
    rowLabels: p.tokens,
    colLabels: idx(D, 'd'),
    pending: (i) => i > p.t,
    highlightRows: [p.t],
  });
  operator(row, '→', 'kv-arrow');
  const w = step.weights[p.head];
  renderMatrix(row, {
    name: 'kv-weights',
    title: tr('walk.fig.kv.query', { t: p.t, token: p.tokens[p.t] }),
    caption: shape(1, p.t + 1),
    data: w,
    scale: sequentialScale(1),
    cell: p.cell,
    rowLabels: [p.tokens[p.t]],
    colLabels: p.tokens.slice(0, p.t + 1),
  });
  const cost = section(host, 'kv-cost', 'kv-cost');
  const maxMacs = Math.max(...p.steps.map((s) => s.macsRecompute));
  cost.innerHTML =
    `<p class="note">${tr('walk.fig.kv.sizes', { full: step.cacheFloats, rows: step.cacheLength, linear: p.linear[p.t].cacheFloats })}</p>` +
    `<table class="kv-table"><thead><tr><th>t</th><th>${tr('walk.fig.kv.cached')}</th><th>${tr('walk.fig.kv.recompute')}</th><th>${tr('walk.fig.kv.linearCost')}</th></tr></thead><tbody>` +
    p.steps
      .slice(0, p.t + 1)
      .map(
        (s, t) =>
          `<tr data-t="${t}" data-cached="${s.macsCached}" data-recompute="${s.macsRecompute}" data-cache-floats="${s.cacheFloats}" data-linear-floats="${p.linear[t].cacheFloats}"><td>${t}</td>` +
          `<td><span class="bar cached" style="width:${(100 * s.macsCached) / maxMacs}px"></span> ${macs(s.macsCached)}</td>` +
          `<td><span class="bar recompute" style="width:${(100 * s.macsRecompute) / maxMacs}px"></span> ${macs(s.macsRecompute)}</td>` +
          `<td><span class="bar linear" style="width:${(100 * p.linear[t].macsCached) / maxMacs}px"></span> ${macs(p.linear[t].macsCached)}</td></tr>`,
      )
      .join('') +
    `</tbody></table>`;
}
