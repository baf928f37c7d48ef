// §3.2: every head of a shipped model (tang or brown) on a text the reader can edit: the grid of
// all heads' attention maps, each titled by its best detector score, and every score in a table.
import { t, type Key } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { renderHeatmap } from '../../ui/heatmap_canvas';
import { sequentialScale } from '../../util/color';
import type { EveryHeadFigure } from './every_head.compute';
import { defineFigure } from './figure';
import type { ShippedName } from '../../engine/protocol/shipped';
import { shippedRef } from './shipped';

/** The text each model reads by default: a Tang couplet pair; an English sentence with a repeated name. */
export const EVERY_HEAD_TEXT: Record<ShippedName, string> = {
  tang: '白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。\n',
  brown: 'Mr. Smith said that the new school would open in May, and Mr. Smith was right.',
};

export const patternName = (p: string) => t(`ch.fig.pattern.${p}` as Key);

function scoreTable(host: HTMLElement, d: EveryHeadFigure) {
  const head = `<tr><th>${t('ch.fig.everyHead.head')}</th>${d.patterns.map((p) => `<th>${patternName(p)}</th>`).join('')}<th>${t('ch.fig.everyHead.best')}</th></tr>`;
  const rows = d.heads
    .map((h) => {
      const cells = d.patterns.map((p) => {
        const s = h.scores[p];
        return `<td data-pattern="${p}" data-value="${s ?? ''}"${h.best?.pattern === p ? ' class="best"' : ''}>${s === null ? '—' : s.toFixed(2)}</td>`;
      });
      return `<tr data-head="${h.layer}.${h.head}"><th>${h.layer}.${h.head}</th>${cells.join('')}<td>${h.best ? patternName(h.best.pattern) : '—'}</td></tr>`;
    })
    .join('');
  const box = document.createElement('div');
  box.className = 'table-wrap every-head-scores';
  box.innerHTML = `<table class="data"><caption>${t('ch.fig.everyHead.tableCaption')}</caption><thead>${head}</thead><tbody>${rows}</tbody></table>`;
  host.appendChild(box);
}

export const everyHeadFigure = defineFigure({
  id: 'every-head',
  shipped: (v) => v('model') as ShippedName,
  controls: [
    { name: 'model', label: 'ch.fig.everyHead.model', values: ['tang', 'brown'], value: 'tang' },
    { name: 'text', label: 'ch.fig.everyHead.text', values: [], value: '', input: 'area', fallback: (v) => EVERY_HEAD_TEXT[v('model') as ShippedName] },
  ],
  request: (v) => ({ figure: 'everyHead', shipped: shippedRef(v('model') as ShippedName), text: String(v('text')) }),
  draw(host, d) {
    const [L, H, T] = d.maps.shape;
    const p = document.createElement('p');
    p.className = 'fig-note';
    p.textContent = t('ch.fig.everyHead.about', { model: d.model, L, H, T, poem: d.patterns.includes('rhyme') ? t('ch.fig.everyHead.poemScores') : t('ch.fig.everyHead.noPoemScores') });
    host.appendChild(p);
    const grid = document.createElement('div');
    grid.className = 'every-head-grid';
    grid.style.setProperty('--heads', String(H));
    host.appendChild(grid);
    const cell = Math.max(5, Math.min(16, Math.floor(150 / T)));
    for (const h of d.heads) {
      const map: Tensor = { shape: [T, T], data: d.maps.data.slice((h.layer * H + h.head) * T * T, (h.layer * H + h.head + 1) * T * T) };
      for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) map.data[i * T + j] = -Infinity;
      const best = h.best ? t('ch.fig.everyHead.label', { pattern: patternName(h.best.pattern), score: h.best.score.toFixed(2) }) : t('ch.fig.everyHead.unlabelled');
      // Sixteen maps on one canvas each: an SVG matrix per head would hold the page's main thread
      // for tens of ms per map.
      const box = document.createElement('div');
      box.className = 'fig-cell';
      grid.appendChild(box);
      const name = `every-head-${h.layer}-${h.head}`;
      renderHeatmap(box, { name, title: `${h.layer}.${h.head} · ${best}`, data: map, scale: sequentialScale(1), cell, ...(T <= 16 ? { rowLabels: d.labels, colLabels: d.labels } : {}) });
      box.querySelector('canvas')!.setAttribute('aria-label', t('ch.fig.everyHead.mapAria', { layer: h.layer, head: h.head, T }));
    }
    scoreTable(host, d);
  },
});
