// §7: modalities meet through cross-attention: a crossmodal model trained in the worker; the
// caption's words as buttons, the chosen word's weights over the image's patches, per head.
import * as d3 from 'd3';
import { lang, t } from '../../i18n';
import { CAPTION_WORDS_ZH } from '../../i18n/words_zh';
import { exactFloat32, fmt } from '../../util/format';
import type { CrossmodalFigure } from './crossmodal.compute';
import { figureExport, note } from './draw';
import { defineFigure } from './figure';
import { writeFigureText } from './url';

export const crossmodalFigure = defineFigure({
  id: 'crossmodal',
  controls: [],
  trained: true,
  request: () => ({ figure: 'crossmodal', steps: 500, seed: 1 }),
  draw: (host, d) => drawCrossmodal(host, d),
});

/** §7: the caption's words as buttons; the chosen word's weights over the image's patches, per head. */
function drawCrossmodal(host: HTMLElement, d: CrossmodalFigure) {
  note(host, t('ch.fig.crossmodal.result', { steps: d.steps, loss: d.loss.toFixed(3), acc: (100 * d.accuracy).toFixed(1), n: d.evalCount }), { accuracy: d.accuracy });
  const url = new URL(location.href);
  let pairIndex = Math.min(d.pairs.length - 1, Math.max(0, Number(url.searchParams.get('f.crossmodal.pair') ?? 0) || 0));
  let word = Math.max(0, Number(url.searchParams.get('f.crossmodal.word') ?? 0) || 0);
  const bar = document.createElement('div');
  bar.className = 'fig-controls cross-words';
  host.appendChild(bar);
  const body = document.createElement('div');
  body.className = 'cross-body';
  host.appendChild(body);
  // A caption word in the page's language (the engine writes them in English).
  const said = (w: string) => (lang() === 'zh' ? (CAPTION_WORDS_ZH[w] ?? w) : w);
  const render = () => {
    const p = d.pairs[pairIndex];
    word = Math.min(word, p.words.length - 1);
    bar.innerHTML = `<span class="small">${t('ch.fig.crossmodal.pair')}</span>${d.pairs.map((_, i) => `<button type="button" data-pair="${i}" aria-pressed="${i === pairIndex}">${i + 1}</button>`).join('')}
      <span class="small">${t('ch.fig.crossmodal.word')}</span>${p.words.map((w, i) => `<button type="button" data-word="${i}" aria-pressed="${i === word}">${said(w)}</button>`).join('')}`;
    body.replaceChildren();
    const [H, , N] = p.maps.shape;
    const [S] = p.image.shape;
    const G = d.grid;
    const px = Math.max(8, Math.min(16, Math.floor((Math.min(host.clientWidth || 600, 640) - 40) / (H * S))));
    const fig = d3.select(body).append('figure').attr('class', 'chart').attr('data-chart', 'crossmodal').attr('data-word', word).attr('data-pair', p.index);
    const title = t('ch.fig.crossmodal.title', { caption: p.words.map(said).join(lang() === 'zh' ? '' : ' '), word: said(p.words[word]), match: p.match.toFixed(2) });
    fig.append('figcaption').attr('class', 'matrix-title').append('span').attr('class', 't').text(title);
    const svg = fig.append('svg').attr('width', H * (S * px + 24)).attr('height', S * px + 22).attr('role', 'img').attr('aria-label', title);
    const gray = d3.scaleLinear<string>().domain([Math.min(...p.image.data), Math.max(...p.image.data)]).range(['#111', '#eee']);
    for (let h = 0; h < H; h++) {
      const g = svg.append('g').attr('transform', `translate(${h * (S * px + 24)},18)`).attr('data-head', h);
      g.append('text').attr('x', 0).attr('y', -5).attr('class', 'fig-label').text(t('ch.fig.crossmodal.head', { h }));
      for (let y = 0; y < S; y++) for (let x = 0; x < S; x++) g.append('rect').attr('x', x * px).attr('y', y * px).attr('width', px).attr('height', px).attr('fill', gray(p.image.data[y * S + x]));
      const row = p.maps.data.subarray((h * p.words.length + word) * N, (h * p.words.length + word + 1) * N);
      const top = Math.max(...row);
      for (let n = 0; n < N; n++) {
        const P = d.patchSize * px;
        g.append('rect').attr('class', 'patch').attr('x', (n % G) * P).attr('y', Math.floor(n / G) * P).attr('width', P).attr('height', P)
          .attr('fill', '#ff7a00').attr('fill-opacity', 0.8 * (row[n] / top)).attr('stroke', '#ff7a00').attr('stroke-opacity', 0.4).attr('stroke-width', 0.5)
          .attr('data-weight', exactFloat32(row[n])).append('title').text(`${t('ch.fig.crossmodal.patch', { n })}: ${fmt(row[n], 3)}`);
      }
    }
    figureExport(fig.node()!, svg.node()!, 'attnlab-crossmodal');
  };
  bar.addEventListener('click', (ev) => {
    const b = (ev.target as HTMLElement).closest<HTMLButtonElement>('button');
    if (!b) return;
    if (b.dataset.pair !== undefined) pairIndex = Number(b.dataset.pair);
    else if (b.dataset.word !== undefined) word = Number(b.dataset.word);
    else return;
    writeFigureText('crossmodal', 'pair', String(pairIndex));
    writeFigureText('crossmodal', 'word', String(word));
    render();
    bar.querySelector<HTMLButtonElement>(b.dataset.pair !== undefined ? `button[data-pair="${pairIndex}"]` : `button[data-word="${word}"]`)?.focus();
  });
  render();
  note(host, t('ch.fig.crossmodal.note'));
}
