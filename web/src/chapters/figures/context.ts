// §1.3: the same word in two contexts, through a shipped model (brown for English, tang for verse):
// how far apart the two occurrences' vectors are at each depth, and which keys each attends to.
import { t, type Key } from '../../i18n';
import { sequentialScale } from '../../util/color';
import type { ContextFigure } from './context.compute';
import { defineFigure } from './figure';
import { note } from './draw';
import type { ShippedName } from '../../engine/protocol/shipped';
import { SHIPPED_HEADS, SHIPPED_LAYERS, shippedRef } from './shipped';

/** The default pair of each model: "bank" of a river and of a loan; 行 as a row (háng) and as walking (xíng). */
export const CONTEXT_DEFAULTS: Record<ShippedName, { a: string; b: string; word: string }> = {
  brown: { a: 'He sat on the river bank and watched the water.', b: 'She went to the bank to ask for a loan.', word: 'bank' },
  tang: { a: '两个黄鹂鸣翠柳，一行白鹭上青天。', b: '行到水穷处，坐看云起时。', word: '行' },
};

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The distances as bars, one per depth: the embedding, then after each block. */
function distanceBars(host: HTMLElement, d: ContextFigure) {
  const max = Math.max(0.05, ...d.distance);
  const rows = d.distance
    .map((v, l) => {
      const name = l === 0 ? t('ch.fig.context.embedding') : t('ch.fig.context.afterBlock', { n: l - 1 });
      return `<div class="ctx-bar" data-layer="${l}" data-value="${v}"><span class="ctx-bar-name">${name}</span><span class="ctx-bar-track"><span class="ctx-bar-fill" style="width:${Math.max(0, (100 * v) / max).toFixed(1)}%"></span></span><span class="ctx-bar-value">${v.toFixed(3)}</span></div>`;
    })
    .join('');
  const box = document.createElement('div');
  box.className = 'ctx-distance';
  box.innerHTML = `<p class="small"><strong>${t('ch.fig.context.distanceTitle', { word: esc(d.word) })}</strong></p>${rows}`;
  host.appendChild(box);
}

/** A sentence's tokens shaded by the occurrence's attention weight on each, the occurrence outlined. */
function sentenceRow(host: HTMLElement, d: ContextFigure, k: 0 | 1) {
  const s = d.sentences[k];
  const scale = sequentialScale(Math.max(...s.row));
  const chips = s.labels
    .map((label, j) => {
      if (j > s.position) return `<span class="ctx-tok future">${esc(label)}</span>`;
      const w = s.row[j];
      return `<span class="ctx-tok${j === s.position ? ' word' : ''}" data-key="${j}" data-weight="${w}" style="background:${scale.color(w)};color:${scale.ink(w)}" title="${w.toFixed(3)}">${esc(label)}</span>`;
    })
    .join('');
  const head = d.head < 0 ? t('ch.fig.context.meanHeads') : t('ch.fig.context.headN', { h: d.head });
  const top = s.top.map((x) => `“${esc(x.label)}” ${x.weight.toFixed(2)}`).join(', ');
  const box = document.createElement('div');
  box.className = 'ctx-sentence';
  box.dataset.sentence = String(k);
  box.innerHTML = `<p class="small"><strong>${k ? 'B' : 'A'}</strong> · ${t('ch.fig.context.rowTitle', { word: esc(d.word), layer: d.layer, head })}</p><p class="ctx-tokens">${chips}</p><p class="small muted ctx-top">${t('ch.fig.context.top', { top })}</p>`;
  host.appendChild(box);
}

function contextFigure(model: ShippedName) {
  const def = CONTEXT_DEFAULTS[model];
  return defineFigure({
    id: `context-${model}`,
    shipped: () => model,
    controls: [
      { name: 'a', label: 'ch.fig.context.a', values: [], value: def.a, input: 'text' },
      { name: 'b', label: 'ch.fig.context.b', values: [], value: def.b, input: 'text' },
      { name: 'word', label: 'ch.fig.context.word', values: [], value: def.word, input: 'word' },
      { name: 'layer', label: 'ch.fig.context.layer', values: SHIPPED_LAYERS, value: 0 },
      { name: 'head', label: 'ch.fig.context.head', values: [-1, ...SHIPPED_HEADS], value: -1, labels: { '-1': 'ch.fig.context.meanHeads' } },
    ],
    request: (v) => ({ figure: 'context', shipped: shippedRef(model), a: String(v('a')), b: String(v('b')), word: String(v('word')), layer: Number(v('layer')), head: Number(v('head')) }),
    draw(host, d) {
      note(host, t(`ch.fig.context.about.${model}` as Key, { word: d.word }));
      const s = d.sentences[0];
      if (s.pieces.length > 1) note(host, t('ch.fig.context.pieces', { word: d.word, n: s.pieces.length, pieces: s.pieces.map((i) => s.labels[i]).join(' + '), last: s.labels[s.position] }));
      distanceBars(host, d);
      sentenceRow(host, d, 0);
      sentenceRow(host, d, 1);
      const last = d.distance[d.distance.length - 1];
      note(host, t('ch.fig.context.result', { word: d.word, first: d.distance[0].toFixed(3), last: last.toFixed(3), blocks: d.layers }), { first: d.distance[0], last });
    },
  });
}

export const contextBrownFigure = contextFigure('brown');
export const contextTangFigure = contextFigure('tang');
