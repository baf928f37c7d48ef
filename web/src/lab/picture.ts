// The series and shapes tasks' pictures (render layer): a held-out window's forecast against the
// truth and the seasonal-naive baseline, and held-out images with one query's attention over its
// window drawn on them. Every number drawn is the engine's (LabPicture, engine/worker/training.ts);
// this file only places them: a patch's window and its index in the window follow
// Model.windowLayout (web/attnlab.d.ts).
import * as d3 from 'd3';
import type { ForecastPicture, ImagesPicture, WindowLayout } from '../engine/protocol/lab';
import { t as tr } from '../i18n';

/** Which layer, head and query the images show; query null = the CLS token where there is one, else the middle patch. */
export interface PicturePick {
  layer: number;
  head: number;
  query: [number, number] | null;
}

/** Map patch (r, c) of the grid: its window w and its index in that window's maps (after the CLS row, if any). */
export function locatePatch(l: WindowLayout, r: number, c: number): { w: number; index: number } {
  const rr = (r - l.shift + l.grid) % l.grid;
  const cc = (c - l.shift + l.grid) % l.grid;
  const w = Math.floor(rr / l.window) * l.windowsPerSide + Math.floor(cc / l.window);
  return { w, index: (rr % l.window) * l.window + (cc % l.window) + (l.cls ? 1 : 0) };
}

/** Index k of window w's maps as a map patch (r, c), or null for the CLS token. */
export function patchAt(l: WindowLayout, w: number, k: number): [number, number] | null {
  if (l.cls && k === 0) return null;
  const p = k - (l.cls ? 1 : 0);
  const wy = Math.floor(w / l.windowsPerSide);
  const wx = w % l.windowsPerSide;
  return [(wy * l.window + Math.floor(p / l.window) + l.shift) % l.grid, (wx * l.window + (p % l.window) + l.shift) % l.grid];
}

export function mountPicture(host: HTMLElement, onPick: (change: Partial<PicturePick>) => void) {
  host.innerHTML = `
    <p class="picture-title muted small"></p>
    <div class="picture-controls">
      <label><span data-i18n="lab.headView.layer">${tr('lab.headView.layer')}</span> <select name="picLayer"></select></label>
      <label><span data-i18n="lab.headView.head">${tr('lab.headView.head')}</span> <select name="picHead"></select></label>
      <span class="picture-query muted"></span>
      <button type="button" class="picture-cls" data-i18n="lab.picture.cls">${tr('lab.picture.cls')}</button>
    </div>
    <div class="picture-body"></div>`;
  host.addEventListener('change', (ev) => {
    const t = ev.target as HTMLSelectElement;
    if (t.name === 'picLayer') onPick({ layer: Number(t.value), query: null });
    if (t.name === 'picHead') onPick({ head: Number(t.value) });
  });
  host.querySelector('.picture-cls')!.addEventListener('click', () => onPick({ query: null }));
  host.addEventListener('click', (ev) => {
    const cell = (ev.target as Element).closest<SVGElement>('[data-patch]');
    if (!cell) return;
    const [r, c] = cell.dataset.patch!.split(',').map(Number);
    onPick({ query: [r, c] });
  });
}

export function renderPicture(host: HTMLElement, picture: ForecastPicture | ImagesPicture | null, pick: PicturePick) {
  host.hidden = !picture;
  if (!picture) return;
  host.dataset.kind = picture.kind;
  host.querySelector<HTMLElement>('.picture-controls')!.hidden = picture.kind !== 'images';
  if (picture.kind === 'forecast') renderForecast(host, picture);
  else renderImages(host, picture, pick);
}

const FORECAST_LINES = [
  { key: 'context', label: 'lab.picture.context', color: '#4d4d4d', dashed: false },
  { key: 'truth', label: 'lab.picture.truth', color: '#1a1a1a', dashed: true },
  { key: 'baseline', label: 'lab.baseline', color: '#8c8c8c', dashed: true },
  { key: 'forecast', label: 'lab.picture.model', color: '#e08214', dashed: false },
] as const;

function renderForecast(host: HTMLElement, p: ForecastPicture) {
  host.querySelector('.picture-title')!.textContent = tr('lab.picture.forecast', { step: p.step });
  const body = host.querySelector<HTMLElement>('.picture-body')!;
  if (!body.querySelector('svg.forecast-plot')) {
    body.innerHTML = `<svg class="forecast-plot"><g class="xaxis"></g><g class="yaxis"></g><g class="lines"></g></svg><div class="curve-keys"></div>`;
  }
  const T = p.context.length;
  const width = Math.max(280, Math.min(640, body.clientWidth || 480));
  const height = 220;
  const m = { top: 10, right: 12, bottom: 26, left: 44 };
  // The context's steps, then the horizon's: each line's points at their own timestamps.
  const lines = FORECAST_LINES.map((l) => {
    const values = p[l.key];
    const offset = l.key === 'context' ? 0 : T;
    return { ...l, values, points: values.map((v, i) => [p.time[offset + i], v] as [number, number]) };
  });
  const all = lines.flatMap((l) => l.values).filter(Number.isFinite);
  const x = d3.scaleLinear().domain(d3.extent(p.time) as [number, number]).range([m.left, width - m.right]);
  const y = d3.scaleLinear().domain(d3.extent(all) as [number, number]).nice().range([height - m.bottom, m.top]);
  const svg = d3.select(body).select<SVGSVGElement>('svg.forecast-plot').attr('width', width).attr('height', height);
  svg.select<SVGGElement>('g.xaxis').attr('transform', `translate(0,${height - m.bottom})`).call(d3.axisBottom(x).ticks(6));
  svg.select<SVGGElement>('g.yaxis').attr('transform', `translate(${m.left},0)`).call(d3.axisLeft(y).ticks(5));
  const line = d3.line<[number, number]>().x((d) => x(d[0])).y((d) => y(d[1]));
  svg
    .select('g.lines')
    .selectAll<SVGPathElement, (typeof lines)[number]>('path.line')
    .data(lines, (d) => d.key)
    .join('path')
    .attr('class', 'line')
    .attr('data-series', (d) => d.key)
    // The engine's values this line draws, for reading back (tests) and the hover title.
    .attr('data-values', (d) => JSON.stringify(d.values))
    .attr('fill', 'none')
    .attr('stroke', (d) => d.color)
    .attr('stroke-width', (d) => (d.key === 'forecast' ? 2 : 1.4))
    .attr('stroke-dasharray', (d) => (d.dashed ? '4 3' : null))
    .attr('d', (d) => line(d.points));
  d3.select(body)
    .select('.curve-keys')
    .selectAll('span')
    .data(lines)
    .join('span')
    .attr('class', 'key')
    .html((d) => `<i style="background:${d.color}"></i>${tr(d.label)}`);
}

function renderImages(host: HTMLElement, p: ImagesPicture, pick: PicturePick) {
  host.querySelector('.picture-title')!.textContent = tr('lab.picture.images', { step: p.step });
  const L = p.layers.length;
  const layer = Math.min(pick.layer, L - 1);
  const head = Math.min(pick.head, p.heads - 1);
  const fill = (name: string, n: number, v: number) => {
    const sel = host.querySelector<HTMLSelectElement>(`select[name="${name}"]`)!;
    if (sel.options.length !== n) sel.innerHTML = Array.from({ length: n }, (_, k) => `<option value="${k}">${k}</option>`).join('');
    sel.value = String(v);
  };
  fill('picLayer', L, layer);
  fill('picHead', p.heads, head);
  const { layout, maps } = p.layers[layer];
  // The query: the picked patch (inside this layer's grid), else the CLS token, else the middle patch.
  const mid = Math.floor(layout.grid / 2);
  const query = pick.query && pick.query[0] < layout.grid && pick.query[1] < layout.grid ? pick.query : layout.cls ? null : ([mid, mid] as [number, number]);
  const at = query ? locatePatch(layout, query[0], query[1]) : { w: 0, index: 0 };
  host.querySelector<HTMLButtonElement>('.picture-cls')!.hidden = !layout.cls;
  host.querySelector('.picture-query')!.textContent = `${tr('lab.picture.query')}: ${query ? tr('lab.picture.patch', { r: query[0], c: query[1] }) : tr('lab.picture.cls')}`;

  const S = p.size;
  const scale = Math.max(4, Math.floor(120 / S)); // screen pixels per image pixel
  const side = S * scale;
  const cellPx = side / layout.grid;
  const body = d3.select(host.querySelector<HTMLElement>('.picture-body')!);
  const figures = body
    .selectAll<HTMLElement, number>('figure.picture-image')
    .data(p.images.map((_, i) => i))
    .join((enter) => {
      const f = enter.append('figure').attr('class', 'picture-image');
      const box = f.append('div').attr('class', 'picture-box');
      box.append('canvas');
      box.append('svg').attr('class', 'picture-attn');
      f.append('figcaption').attr('class', 'small');
      return f;
    });
  figures.each(function (i) {
    const img = p.images[i];
    const fig = d3.select(this);
    fig.attr('data-image', i);
    fig.select('figcaption').text(tr('lab.picture.guess', { label: img.label, predicted: img.predicted, p: img.probability.toFixed(2) }));
    const canvas = fig.select<HTMLCanvasElement>('canvas').node()!;
    canvas.width = S;
    canvas.height = S;
    Object.assign(canvas.style, { width: `${side}px`, height: `${side}px` });
    const ctx = canvas.getContext('2d')!;
    const data = ctx.createImageData(S, S);
    for (let k = 0; k < S * S; k++) {
      const v = Math.round(255 * (1 - Math.max(0, Math.min(1, img.pixels[k])))); // ink dark on white
      data.data.set([v, v, v, 255], 4 * k);
    }
    ctx.putImageData(data, 0, 0);
    // This image's weights of the query's row in its window, head `head`: (nW, H, M², M²).
    const m = maps[i];
    const [, H, M2] = m.shape;
    const row = ((at.w * H + head) * M2 + at.index) * M2;
    const weights = Array.from({ length: M2 }, (_, k) => ({ k, w: m.data[row + k], patch: patchAt(layout, at.w, k) }));
    const peak = Math.max(1e-12, ...weights.map((d) => d.w));
    const svg = fig.select<SVGSVGElement>('svg.picture-attn').attr('width', side).attr('height', side).attr('data-window', at.w).attr('data-query', at.index).attr('data-head', head).attr('data-layer', layer);
    // Every patch of the grid is a click target; those in the query's window carry its weight.
    const inWindow = new Map(weights.filter((d) => d.patch).map((d) => [`${d.patch![0]},${d.patch![1]}`, d]));
    const cells = Array.from({ length: layout.grid * layout.grid }, (_, n) => {
      const r = Math.floor(n / layout.grid);
      const c = n % layout.grid;
      return { r, c, d: inWindow.get(`${r},${c}`) ?? null };
    });
    svg
      .selectAll<SVGRectElement, (typeof cells)[number]>('rect.patch')
      .data(cells)
      .join('rect')
      .attr('class', (d) => `patch${d.d ? ' in-window' : ''}${query && d.r === query[0] && d.c === query[1] ? ' query' : ''}`)
      .attr('data-patch', (d) => `${d.r},${d.c}`)
      .attr('data-k', (d) => (d.d ? d.d.k : null))
      .attr('data-w', (d) => (d.d ? d.d.w : null))
      .attr('x', (d) => d.c * cellPx)
      .attr('y', (d) => d.r * cellPx)
      .attr('width', cellPx)
      .attr('height', cellPx)
      // Opacity relative to the row's largest weight, so a flat row still shows its shape; the title has the value.
      .attr('fill', (d) => (d.d ? '#e08214' : '#000'))
      .attr('fill-opacity', (d) => (d.d ? 0.75 * (d.d.w / peak) : 0.25))
      .each(function (d) {
        const title = this.querySelector('title') ?? this.appendChild(document.createElementNS('http://www.w3.org/2000/svg', 'title'));
        title.textContent = d.d ? tr('lab.picture.cell', { r: d.r, c: d.c, w: d.d.w.toFixed(4) }) : '';
      });
    const cls = weights.find((d) => !d.patch);
    svg.attr('data-cls-w', cls ? cls.w : null);
  });
}
