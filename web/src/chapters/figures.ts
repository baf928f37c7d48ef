// The chapters' live figures: each asks the engine worker for its numbers (engine/chapter_figures.ts)
// and draws them with the shared matrix, histogram and chart components. Derived numbers shown
// here (a max difference, an entropy) come from the worker too; the figure only draws.
import * as d3 from 'd3';
import { t, type Key } from '../i18n';
import type { FigureData, FigureProgress, FigureRequest } from '../engine/protocol/chapters';
import type { Tensor } from '../engine/protocol/messages';
import { exportButtons } from '../ui/export';
import { renderHistogram } from '../ui/histogram';
import { renderMatrix } from '../ui/matrix';
import { divergingScale, HEAD_COLORS, maxAbs, sequentialScale, type ColorScale } from '../util/color';
import { exactFloat32, fmt } from '../util/format';
import type { FigureId } from './chapters';
import { readFigure, writeFigure } from './url';

/** Computes a figure in the engine worker; trained figures report their training progress. */
export type FigureSource = (r: FigureRequest, onProgress?: (p: FigureProgress) => void) => Promise<FigureData>;

interface Control {
  name: string;
  label: Key;
  values: (number | string)[];
  value: number | string;
}

/** The cell size that fits `cols` columns in the block's width (phones get small cells). */
function cellFor(host: HTMLElement, cols: number, max = 34): number {
  const w = Math.max(280, Math.min(host.clientWidth || 600, 700));
  return Math.max(9, Math.min(max, Math.floor((w - 60) / cols)));
}

/**
 * Matrices are drawn one per task (an SVG matrix of a few hundred cells costs tens of ms): a chapter
 * with many of them never holds the main thread for long. `drawing` collects the renders one
 * figure queued, so the figure can say when it is complete.
 */
const queue: (() => void)[] = [];
let pumping = false;
let drawing: Promise<void>[] = [];
function later(fn: () => void) {
  drawing.push(
    new Promise<void>((resolve) => {
      queue.push(() => {
        fn();
        resolve();
      });
    }),
  );
  if (!pumping) {
    pumping = true;
    setTimeout(pump, 0);
  }
}
function pump() {
  queue.shift()?.();
  if (queue.length) setTimeout(pump, 0);
  else pumping = false;
}

function matrix(host: HTMLElement, name: string, title: string, data: Tensor, scale: ColorScale, opts: { cell?: number; digits?: number; rowLabels?: string[]; colLabels?: string[]; colBands?: string[] } = {}) {
  const cell = document.createElement('div');
  cell.className = 'fig-cell';
  host.appendChild(cell);
  const K = data.shape[1];
  const size = opts.cell ?? cellFor(host, K);
  later(() => drawMatrix(cell, name, title, data, scale, size, opts));
}

function drawMatrix(cell: HTMLElement, name: string, title: string, data: Tensor, scale: ColorScale, size: number, opts: { digits?: number; rowLabels?: string[]; colLabels?: string[]; colBands?: string[] }) {
  const [R, K] = data.shape;
  renderMatrix(cell, { name, title, data, scale, cell: size, digits: opts.digits ?? 2, rowLabels: opts.rowLabels, colLabels: opts.colLabels, colBands: opts.colBands, masked: (i, j) => !Number.isFinite(data.data[i * K + j]) });
  const svg = cell.querySelector<SVGSVGElement>('svg')!;
  const finite = Array.from(data.data).filter(Number.isFinite);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', t('ch.summary.matrix', { title, rows: R, cols: K, min: fmt(finite.length ? Math.min(...finite) : NaN), max: fmt(finite.length ? Math.max(...finite) : NaN) }));
  exportButtons(cell, () => svg, `attnlab-${name}`, { svg: t('fig.export.svg'), png: t('fig.export.png') });
}

const note = (host: HTMLElement, text: string, attrs: Record<string, string | number> = {}) => {
  const p = document.createElement('p');
  p.className = 'fig-note';
  p.textContent = text;
  for (const [k, v] of Object.entries(attrs)) p.dataset[k] = String(v);
  host.appendChild(p);
};

const range = (n: number, f: (i: number) => string = String) => Array.from({ length: n }, (_, i) => f(i));

/** One figure: its controls (kept in the URL), then what the engine computed. */
export class LiveFigure {
  readonly el: HTMLElement;
  private controls: Control[];
  private version = 0;

  constructor(readonly id: FigureId, private readonly source: FigureSource) {
    this.el = document.createElement('div');
    this.el.className = 'fig-block';
    this.el.dataset.figure = id;
    const url = new URL(location.href);
    this.controls = CONTROLS[id].map((c) => ({ ...c, value: typeof c.value === 'number' ? readFigure(url, id, c.name, c.value) : (url.searchParams.get(`f.${id}.${c.name}`) ?? c.value) }));
    this.el.addEventListener('change', (ev) => {
      const s = ev.target as HTMLSelectElement;
      const c = this.controls.find((k) => k.name === s.dataset.control);
      if (!c) return;
      c.value = typeof c.values[0] === 'number' ? Number(s.value) : s.value;
      writeFigureValue(id, c);
      void this.draw();
    });
  }

  private value(name: string): number | string {
    return this.controls.find((c) => c.name === name)!.value;
  }

  async draw() {
    const v = ++this.version;
    const bar = this.controls
      .map((c) => `<label class="field inline"><span>${t(c.label)}</span><select data-control="${c.name}">${c.values.map((x) => `<option${x === c.value ? ' selected' : ''}>${x}</option>`).join('')}</select></label>`)
      .join('');
    this.el.dataset.state = 'loading';
    const request = REQUEST[this.id]((n) => this.value(n));
    const trained = request.figure === 'crossmodal' || request.figure === 'longrange' || request.figure === 'forecast';
    if (trained) this.el.innerHTML = `<div class="fig-training"><p class="small" role="status">${t('fig.train.start')}</p><progress max="1" value="0"></progress></div>`;
    let data: FigureData;
    try {
      data = await this.source(request, (p) => {
        if (v !== this.version) return;
        const status = this.el.querySelector<HTMLElement>('.fig-training p');
        if (status) status.textContent = t('fig.train.progress', { step: p.step, total: p.total, loss: p.loss.toFixed(3) });
        const bar = this.el.querySelector<HTMLProgressElement>('.fig-training progress');
        if (bar) bar.value = p.step / p.total;
      });
    } catch (e) {
      if (v !== this.version) return;
      this.el.innerHTML = `<p class="fig-error">${t('ch.figError', { message: e instanceof Error ? e.message : String(e) })}</p>`;
      this.el.dataset.state = 'error';
      return;
    }
    if (v !== this.version) return;
    this.el.innerHTML = bar ? `<div class="fig-controls">${bar}</div>` : '';
    const body = document.createElement('div');
    body.className = 'fig-body';
    this.el.appendChild(body);
    const mine = (drawing = []);
    DRAW[data.figure](body, data as never, (n) => this.value(n));
    await Promise.all(mine);
    if (v !== this.version) return;
    this.el.dataset.state = 'ready';
  }
}

const writeFigureValue = (id: string, c: Control) => (typeof c.value === 'number' ? writeFigure(id, c.name, c.value) : writeText(id, c.name, c.value));
function writeText(id: string, name: string, v: string) {
  const url = new URL(location.href);
  url.searchParams.set(`f.${id}.${name}`, v);
  history.replaceState(history.state, '', url);
}

const CONTROLS: Record<FigureId, Omit<Control, never>[]> = {
  chain: [],
  dk: [{ name: 'dk', label: 'fig.dk.slider', values: [4, 16, 64, 128, 256, 512], value: 64 }],
  reshape: [],
  permutation: [{ name: 'pos', label: 'fig.perm.pos', values: ['none', 'sinusoidal', 'rope'], value: 'none' }],
  pe: [],
  rope: [],
  sparse: [],
  masks: [],
  fp16: [{ name: 'size', label: 'fig.fp16.magnitude', values: [1, 4, 16, 64], value: 16 }],
  flash: [{ name: 'tile', label: 'fig.flash.tile', values: [2, 4, 8], value: 4 }],
  check: [],
  connectivity: [],
  crossmodal: [],
  forecast: [{ name: 'pos', label: 'fig.forecast.pos', values: ['time', 'sinusoidal'], value: 'time' }],
  checkpointing: [],
  longrange: [{ name: 'k', label: 'fig.long.k', values: [8, 12], value: 8 }],
  vision: [
    { name: 'arch', label: 'fig.vision.arch', values: ['swin', 'vit'], value: 'swin' },
    { name: 'layer', label: 'fig.vision.layer', values: [0, 1], value: 1 },
  ],
};

const REQUEST: Record<FigureId, (v: (n: string) => number | string) => FigureRequest> = {
  chain: () => ({ figure: 'chain', T: 8, seed: 3 }),
  connectivity: () => ({ figure: 'chain', T: 8, seed: 3 }),
  dk: (v) => ({ figure: 'dk', dk: Number(v('dk')), T: 12, seed: 7 }),
  reshape: () => ({ figure: 'reshape', T: 4, C: 8, H: 2, seed: 5 }),
  permutation: (v) => ({ figure: 'permutation', T: 3, C: 8, seed: 11, perm: [2, 1, 0], positional: v('pos') as 'none' }),
  pe: () => ({ figure: 'pe', T: 24, C: 16 }),
  rope: () => ({ figure: 'rope', T: 10, C: 8, seed: 2 }),
  sparse: () => ({ figure: 'sparse', T: 24, blockSize: 4, windowBlocks: 1, globalBlocks: 1, randomBlocks: 1, window: 3, globalTokens: 2 }),
  masks: () => ({ figure: 'masks', T: 6, pad: 2, seed: 4 }),
  fp16: (v) => ({ figure: 'fp16', T: 6, magnitude: Number(v('size')), seed: 9 }),
  flash: (v) => ({ figure: 'flash', T: 8, tile: Number(v('tile')), seed: 6 }),
  check: () => ({ figure: 'check', T: 4, C: 8, H: 2, seed: 12 }),
  crossmodal: () => ({ figure: 'crossmodal', steps: 500, seed: 1 }),
  forecast: (v) => ({ figure: 'forecast', positional: v('pos') as 'time', steps: 300, seed: 1 }),
  checkpointing: () => ({ figure: 'checkpointing', depths: [2, 4, 8, 16], dModel: 64, numHeads: 4, seqLen: 128, batch: 8 }),
  longrange: (v) => ({ figure: 'longrange', k: Number(v('k')), steps: 400, seed: 1 }),
  vision: (v) => ({ figure: 'vision', arch: v('arch') as 'vit', layer: Number(v('layer')), seed: 3 }),
};

type Drawers = { [K in FigureData['figure']]: (host: HTMLElement, d: Extract<FigureData, { figure: K }>, v: (n: string) => number | string) => void };

const WORDS_EN = ['I', 'love', 'you'];

const DRAW: Drawers = {
  chain(host, d) {
    // Drawn for 'chain' (§1) and 'connectivity' (§9): the block's figure id tells which.
    const id = host.closest<HTMLElement>('[data-figure]')!.dataset.figure;
    const T = d.weights.shape[0];
    if (id === 'connectivity') return drawConnectivity(host, d.weights);
    const w = Math.min(620, Math.max(300, host.clientWidth || 600));
    const chart = d3.select(host).append('figure').attr('class', 'chart').attr('data-chart', 'chain');
    const svg = chart.append('svg').attr('width', w).attr('height', 250).attr('role', 'img').attr('aria-label', t('fig.chain.title'));
    const xs = (i: number) => 24 + (i * (w - 48)) / (T - 1);
    const g1 = svg.append('g');
    g1.append('text').attr('x', 8).attr('y', 18).attr('class', 'fig-label').text(t('fig.chain.rnn', { n: T, steps: T - 1 }));
    for (let i = 0; i < T - 1; i++) g1.append('line').attr('x1', xs(i) + 8).attr('x2', xs(i + 1) - 8).attr('y1', 50).attr('y2', 50).attr('class', 'edge').attr('marker-end', '');
    for (let i = 0; i < T; i++) g1.append('circle').attr('cx', xs(i)).attr('cy', 50).attr('r', 8).attr('class', 'node');
    const g2 = svg.append('g');
    g2.append('text').attr('x', 8).attr('y', 100).attr('class', 'fig-label').text(t('fig.chain.attn'));
    const y0 = 230;
    for (let i = 0; i < T; i++)
      for (let j = 0; j < T; j++) {
        if (i === j) continue;
        const wij = d.weights.data[i * T + j];
        const a = xs(i), b = xs(j);
        const h = Math.abs(a - b) * 0.45;
        g2.append('path').attr('d', `M${a},${y0} Q${(a + b) / 2},${y0 - h} ${b},${y0}`).attr('class', 'edge attn').attr('stroke-width', 0.4 + 5 * wij).attr('stroke-opacity', 0.25 + 0.6 * wij).attr('data-weight', exactFloat32(wij));
      }
    for (let i = 0; i < T; i++) g2.append('circle').attr('cx', xs(i)).attr('cy', y0).attr('r', 8).attr('class', 'node');
    const chainSvg = svg.node()!;
    exportButtons(chart.node()!, () => chainSvg, 'attnlab-chain', { svg: t('fig.export.svg'), png: t('fig.export.png') });
    matrix(host, 'chain-weights', 'softmax(QKᵀ/√d)', d.weights, sequentialScale(1), { cell: cellFor(host, T, 30) });
  },
  dk(host, d) {
    const bins = (s: Tensor, lo: number, hi: number) => {
      const n = 24;
      const out = range(n).map((_, i) => ({ x0: lo + ((hi - lo) * i) / n, x1: lo + ((hi - lo) * (i + 1)) / n, count: 0 }));
      for (const v of s.data) out[Math.min(n - 1, Math.max(0, Math.floor(((v - lo) / (hi - lo)) * n)))].count++;
      return out;
    };
    const m = Math.max(1, maxAbs(d.unscaledScores.data, d.scaledScores.data));
    const cell = document.createElement('div');
    cell.className = 'fig-cell';
    host.appendChild(cell);
    renderHistogram(cell, 'dk', `${t('fig.dk.title', { dk: d.dk })} — ${t('fig.dk.hist')}`, [
      { label: t('fig.dk.unscaled'), color: HEAD_COLORS[2], bins: bins(d.unscaledScores, -m, m) },
      { label: t('fig.dk.scaled'), color: HEAD_COLORS[0], bins: bins(d.scaledScores, -m, m) },
    ], [-m, m], Math.min(420, Math.max(280, host.clientWidth - 20)), 170);
    const svg = cell.querySelector<SVGSVGElement>('svg')!;
    exportButtons(cell, () => svg, 'attnlab-dk-hist', { svg: t('fig.export.svg'), png: t('fig.export.png') });
    const tb = document.createElement('table');
    tb.className = 'fig-stats';
    tb.dataset.stats = 'dk';
    const row = (k: 'scaled' | 'unscaled') => `<tr data-row="${k}"><th>${t(k === 'scaled' ? 'fig.dk.scaled' : 'fig.dk.unscaled')}</th><td data-v="scoreStd">${fmt(d.stats[k].scoreStd)}</td><td data-v="entropy">${fmt(d.stats[k].entropy)}</td><td data-v="gradNorm">${d.stats[k].gradNorm.toExponential(2)}</td></tr>`;
    tb.innerHTML = `<thead><tr><th></th><th>${t('fig.dk.std')}</th><th>${t('fig.dk.entropy')}</th><th>${t('fig.dk.grad')}</th></tr></thead><tbody>${row('scaled')}${row('unscaled')}</tbody>`;
    host.appendChild(tb);
    const T = d.scaledWeights.shape[0];
    matrix(host, 'dk-weights-scaled', t('fig.dk.weightsScaled'), d.scaledWeights, sequentialScale(1), { cell: cellFor(host, 2 * T, 26) });
    matrix(host, 'dk-weights-unscaled', t('fig.dk.weightsUnscaled'), d.unscaledWeights, sequentialScale(1), { cell: cellFor(host, 2 * T, 26) });
  },
  reshape(host, d) {
    const [T, C] = d.q.shape;
    const H = d.right.length;
    const D = C / H;
    const scale = divergingScale(maxAbs(d.q.data));
    const tok = range(T, (i) => `t${i}`);
    matrix(host, 'reshape-q', t('fig.reshape.q'), d.q, scale, { rowLabels: tok, colBands: range(C, (j) => HEAD_COLORS[Math.floor(j / D)]), cell: cellFor(host, C, 40) });
    for (let h = 0; h < H; h++) matrix(host, `reshape-right-${h}`, t('fig.reshape.right', { h }), d.right[h], scale, { rowLabels: tok, cell: cellFor(host, 2 * D, 40) });
    for (let h = 0; h < H; h++) {
      matrix(host, `reshape-wrong-${h}`, `${t('fig.reshape.wrong', { h })} — ${t('fig.reshape.rows', { tokens: d.wrongTokens[h].map((x) => `t${x}`).join(', ') })}`, d.wrong[h], scale, { rowLabels: range(T, (i) => `t${d.wrongTokens[h][i]}`), cell: cellFor(host, 2 * D, 40) });
    }
  },
  permutation(host, d, v) {
    const scale = divergingScale(maxAbs(d.permutedY.data, d.yOfPermuted.data));
    const words = [2, 1, 0].map((i) => WORDS_EN[i]);
    const C = d.y.shape[1];
    note(host, t('fig.perm.title', { perm: '“I love you” → “you love I”' }));
    matrix(host, 'perm-y', t('fig.perm.y'), d.permutedY, scale, { rowLabels: words, cell: cellFor(host, 2 * C, 30) });
    matrix(host, 'perm-yp', t('fig.perm.yp'), d.yOfPermuted, scale, { rowLabels: words, cell: cellFor(host, 2 * C, 30) });
    const equal = d.maxDiff < 1e-5;
    note(host, `${t('ch.maxDiff', { v: d.maxDiff.toExponential(2) })} (${v('pos')}) — ${t(equal ? 'fig.perm.equal' : 'fig.perm.differ')}`, { maxDiff: d.maxDiff });
  },
  pe(host, d) {
    const [T, C] = d.table.shape;
    matrix(host, 'pe-table', t('fig.pe.table'), d.table, divergingScale(1), { cell: cellFor(host, C + T, 18) });
    matrix(host, 'pe-sim', t('fig.pe.sim'), d.similarity, divergingScale(maxAbs(d.similarity.data)), { cell: cellFor(host, C + T, 18) });
  },
  rope(host, d) {
    const T = d.scores.shape[0];
    matrix(host, 'rope-scores', t('fig.rope.title'), d.scores, divergingScale(maxAbs(d.scores.data)), { cell: cellFor(host, T, 34), rowLabels: range(T, (i) => `m=${i}`), colLabels: range(T, (i) => `n=${i}`) });
    note(host, t('fig.rope.note', { v: d.diagonalSpread.toExponential(2) }), { spread: d.diagonalSpread });
  },
  sparse(host, d) {
    const T = Math.sqrt(d.full);
    const b = T / d.blocks.shape[0];
    const nb = d.blocks.shape[0];
    const expanded = new Float32Array(T * T);
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) expanded[i * T + j] = d.blocks.data[Math.floor(i / b) * nb + Math.floor(j / b)] ? 1 : -Infinity;
    matrix(host, 'sparse-blocks', t('fig.sparse.blocks', { b, live: d.blockLive, full: d.full }), { shape: [T, T], data: expanded }, sequentialScale(1), { cell: cellFor(host, 2 * T, 12), digits: 0 });
    const win = new Float32Array(d.windowMask.data.length);
    d.windowMask.data.forEach((x, i) => (win[i] = Number.isFinite(x) ? 1 : -Infinity));
    matrix(host, 'sparse-window', t('fig.sparse.window', { w: 3, g: 2, live: d.windowLive, full: d.full }), { shape: [T, T], data: win }, sequentialScale(1), { cell: cellFor(host, 2 * T, 12), digits: 0 });
  },
  masks(host, d) {
    const T = d.causal.shape[0];
    const s = divergingScale(maxAbs(d.causal.data, d.padding.data));
    const c = cellFor(host, 2 * T, 40);
    matrix(host, 'mask-causal', t('fig.masks.causal'), d.causal, s, { cell: c });
    matrix(host, 'mask-padding', t('fig.masks.padding', { pad: 2 }), d.padding, s, { cell: c });
    matrix(host, 'mask-both', t('fig.masks.both'), d.both, s, { cell: c });
    matrix(host, 'mask-weights', t('fig.masks.weights'), d.weightsBoth, sequentialScale(1), { cell: c });
  },
  fp16(host, d) {
    const T = d.scaled.shape[0];
    const c = cellFor(host, 2 * T, 44);
    matrix(host, 'fp16-scaled', t('fig.fp16.scaled', { max: fmt(d.maxScore, 1) }), d.scaled, divergingScale(maxAbs(d.scaled.data)), { cell: c, digits: 1 });
    matrix(host, 'fp16-naive', t('fig.fp16.naive', { n: d.naiveNonFinite }), d.naive, sequentialScale(1), { cell: c });
    matrix(host, 'fp16-fixed', t('fig.fp16.fixed', { n: d.fixedNonFinite }), d.fp32Softmax, sequentialScale(1), { cell: c });
    host.dataset.naiveNonFinite = String(d.naiveNonFinite);
  },
  flash(host, d) {
    const T = d.scaled.shape[0];
    const c = cellFor(host, 2 * T, 36);
    const tiles = range(d.runningMax.shape[1], (b) => `≤${Math.min(T, (b + 1) * d.tile) - 1}`);
    matrix(host, 'flash-max', t('fig.flash.max'), d.runningMax, divergingScale(maxAbs(d.runningMax.data)), { cell: c, colLabels: tiles });
    matrix(host, 'flash-sum', t('fig.flash.sum'), d.runningSum, sequentialScale(Math.max(...d.runningSum.data)), { cell: c, colLabels: tiles });
    matrix(host, 'flash-tiled', t('fig.flash.tiled'), d.tiled, sequentialScale(1), { cell: c });
    matrix(host, 'flash-full', t('fig.flash.full'), d.weights, sequentialScale(1), { cell: c });
    note(host, t('ch.maxDiff', { v: d.maxDiff.toExponential(2) }), { maxDiff: d.maxDiff });
  },
  vision(host, d) {
    // The image, each patch tinted by the window it belongs to, and the attention of one query
    // patch per window (the window's middle patch) drawn as the opacity of the patches it looks at.
    const [S] = d.image.shape;
    const L = d.layout;
    const [nW, H, N] = d.maps.shape;
    const M = L.window;
    const px = Math.max(8, Math.min(22, Math.floor((Math.min(host.clientWidth || 600, 640) - 40) / (2 * S))));
    const size = S * px;
    const fig = d3.select(host).append('figure').attr('class', 'chart').attr('data-chart', 'vision');
    fig.append('figcaption').attr('class', 'matrix-title').append('span').attr('class', 't').text(t('fig.vision.title', { grid: L.grid, windows: nW, shift: L.shift }));
    const svg = fig.append('svg').attr('width', 2 * size + 30).attr('height', size + 4).attr('role', 'img').attr('aria-label', t('fig.vision.title', { grid: L.grid, windows: nW, shift: L.shift }));
    const gray = d3.scaleLinear<string>().domain([Math.min(...d.image.data), Math.max(...d.image.data)]).range(['#111', '#eee']);
    const patchAt = (w: number, n: number) => {
      const wy = Math.floor(w / L.windowsPerSide), wx = w % L.windowsPerSide;
      const i = Math.floor(n / M), j = n % M;
      return [(wy * M + i + L.shift) % L.grid, (wx * M + j + L.shift) % L.grid];
    };
    for (const panel of [0, 1]) {
      const g = svg.append('g').attr('transform', `translate(${panel * (size + 30)},2)`);
      for (let y = 0; y < S; y++) for (let x = 0; x < S; x++) g.append('rect').attr('x', x * px).attr('y', y * px).attr('width', px).attr('height', px).attr('fill', gray(d.image.data[y * S + x]));
      for (let w = 0; w < nW; w++) {
        // ViT: one window of the whole grid after a CLS row; Swin: M x M patches per window.
        const first = L.cls ? 1 : 0;
        const count = N - first;
        const side = L.cls ? L.grid : M;
        const q = Math.floor(side / 2) * side + Math.floor(side / 2);
        for (let n = 0; n < count; n++) {
          const [py, pxx] = L.cls ? [Math.floor(n / L.grid), n % L.grid] : patchAt(w, n);
          const weight = d.maps.data[((w * H + 0) * N + first + q) * N + first + n];
          if (panel === 1 && n === q && !L.cls) g.append('rect').attr('x', pxx * L.patchSize * px).attr('y', py * L.patchSize * px).attr('width', L.patchSize * px).attr('height', L.patchSize * px).attr('fill', 'none').attr('stroke', '#fff').attr('stroke-width', 2).attr('class', 'query');
          g.append('rect')
            .attr('x', pxx * L.patchSize * px).attr('y', py * L.patchSize * px).attr('width', L.patchSize * px).attr('height', L.patchSize * px)
            .attr('fill', panel === 0 ? HEAD_COLORS[w % HEAD_COLORS.length] : '#ff7a00')
            .attr('fill-opacity', panel === 0 ? 0.35 : Math.min(0.85, weight * count * 0.35))
            .attr('stroke', panel === 0 ? HEAD_COLORS[w % HEAD_COLORS.length] : 'none').attr('stroke-width', 0.5)
            .attr('data-window', w).attr('data-weight', panel === 1 ? exactFloat32(weight) : null);
        }
      }
    }
    const svgNode = svg.node()!;
    exportButtons(fig.node()!, () => svgNode, 'attnlab-vision', { svg: t('fig.export.svg'), png: t('fig.export.png') });
    note(host, t('fig.vision.note'));
  },
  crossmodal(host, d) {
    drawCrossmodal(host, d);
  },
  forecast(host, d) {
    drawForecast(host, d);
  },
  checkpointing(host, d) {
    // Grouped bars: per depth, the bytes kept for backward without and with checkpointing (MiB).
    const w = Math.min(560, Math.max(300, host.clientWidth || 560));
    const h = 220;
    const m = { top: 28, right: 10, bottom: 36, left: 56 };
    const mib = (b: number) => b / 2 ** 20;
    const x = d3.scaleBand().domain(d.rows.map((r) => String(r.layers))).range([m.left, w - m.right]).padding(0.25);
    const y = d3.scaleLinear().domain([0, mib(Math.max(...d.rows.map((r) => r.full)))]).nice().range([h - m.bottom, m.top]);
    const title = t('fig.ckpt.title', { T: d.seqLen, B: d.batch, C: d.dModel });
    const fig = d3.select(host).append('figure').attr('class', 'chart').attr('data-chart', 'checkpointing');
    fig.append('figcaption').attr('class', 'matrix-title').append('span').attr('class', 't').text(title);
    const svg = fig.append('svg').attr('width', w).attr('height', h).attr('role', 'img').attr('aria-label', `${title}: ${d.rows.map((r) => `${r.layers}: ${fmt(mib(r.full), 2)} / ${fmt(mib(r.checkpointed), 2)} MiB`).join('; ')}`);
    svg.append('g').attr('transform', `translate(0,${h - m.bottom})`).call(d3.axisBottom(x));
    svg.append('g').attr('transform', `translate(${m.left},0)`).call(d3.axisLeft(y).ticks(5));
    svg.append('text').attr('x', (m.left + w) / 2).attr('y', h - 4).attr('text-anchor', 'middle').attr('class', 'fig-label').text(t('fig.ckpt.layers'));
    svg.append('text').attr('transform', `translate(12,${(h - m.bottom + m.top) / 2}) rotate(-90)`).attr('text-anchor', 'middle').attr('class', 'fig-label').text('MiB');
    const bw = x.bandwidth() / 2;
    const kinds = [['full', HEAD_COLORS[2], t('fig.ckpt.without')], ['checkpointed', HEAD_COLORS[0], t('fig.ckpt.with')]] as const;
    for (const r of d.rows)
      kinds.forEach(([k, color], i) => {
        svg.append('rect').attr('x', x(String(r.layers))! + i * bw).attr('width', bw - 1).attr('y', y(mib(r[k]))).attr('height', y(0) - y(mib(r[k])))
          .attr('fill', color).attr('data-layers', r.layers).attr('data-kind', k).attr('data-bytes', r[k]).append('title').text(`${r.layers}: ${fmt(mib(r[k]), 3)} MiB`);
      });
    kinds.forEach(([, color, label], i) => {
      svg.append('rect').attr('x', m.left + 8 + i * 170).attr('y', 6).attr('width', 12).attr('height', 12).attr('fill', color);
      svg.append('text').attr('x', m.left + 24 + i * 170).attr('y', 16).attr('class', 'fig-label').text(label);
    });
    const node = svg.node()!;
    exportButtons(fig.node()!, () => node, 'attnlab-checkpointing', { svg: t('fig.export.svg'), png: t('fig.export.png') });
    const last = d.rows[d.rows.length - 1];
    note(host, t('fig.ckpt.note', { L: last.layers, full: fmt(mib(last.full), 2), kept: fmt(mib(last.checkpointed), 2), x: (last.full / last.checkpointed).toFixed(1) }));
  },
  longrange(host, d) {
    // The decoder's one layer, each head's (T, T) map: a copy of the token k back is a bright
    // off-diagonal k below the main one.
    const [, H, T] = d.maps.shape;
    note(host, t('fig.long.result', { k: d.k, steps: d.steps, loss: d.loss.toFixed(3), acc: (100 * d.accuracy).toFixed(1) }), { accuracy: d.accuracy });
    const labels = d.tokens.map(String);
    for (let h = 0; h < H; h++) {
      const map: Tensor = { shape: [T, T], data: d.maps.data.slice(h * T * T, (h + 1) * T * T) };
      for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) map.data[i * T + j] = -Infinity;
      let onLink = 0;
      for (let i = d.k; i < T; i++) onLink += map.data[i * T + i - d.k];
      matrix(host, `longrange-h${h}`, t('fig.long.title', { h, k: d.k, w: (onLink / (T - d.k)).toFixed(2) }), map, sequentialScale(1), { cell: cellFor(host, T, 22), rowLabels: labels, colLabels: labels });
    }
  },
  check(host, d) {
    const tb = document.createElement('table');
    tb.className = 'fig-stats';
    tb.dataset.stats = 'check';
    tb.innerHTML = `<tbody>${d.stages.map((s) => `<tr data-stage="${s.name}"><th>${s.name}</th><td data-max-diff="${s.maxDiff}">${t('ch.maxDiff', { v: s.maxDiff.toExponential(2) })}</td></tr>`).join('')}</tbody>`;
    host.appendChild(tb);
    const out = d.stages.find((s) => s.name === 'output')!;
    const scale = divergingScale(maxAbs(out.engine.data));
    const c = cellFor(host, 2 * out.engine.shape[1], 40);
    matrix(host, 'check-engine', `${t('fig.check.title', { name: 'output' })} — engine`, out.engine, scale, { cell: c });
    matrix(host, 'check-plain', `${t('fig.check.title', { name: 'output' })} — JavaScript`, out.plain, scale, { cell: c });
  },
};

/** §9: who position i sees under a convolution, a recurrence and attention (the engine's weights). */
function drawConnectivity(host: HTMLElement, weights: Tensor) {
  const T = weights.shape[0];
  const i = Math.floor(T / 2);
  const w = Math.min(620, Math.max(300, host.clientWidth || 600));
  const xs = (k: number) => 24 + (k * (w - 48)) / (T - 1);
  const svg = d3.select(host).append('figure').attr('class', 'chart').attr('data-chart', 'connectivity').append('svg').attr('width', w).attr('height', 260).attr('role', 'img').attr('aria-label', t('fig.conn.title', { i }));
  const rows: [Key, (j: number) => number][] = [
    ['fig.conn.conv', (j) => (Math.abs(j - i) <= 1 ? 1 : 0)],
    ['fig.conn.rnn', (j) => (j === i - 1 ? 1 : 0)],
    ['fig.conn.attn', (j) => weights.data[i * T + j]],
  ];
  rows.forEach(([label, weight], r) => {
    const y = 60 + r * 80;
    svg.append('text').attr('x', 8).attr('y', y - 34).attr('class', 'fig-label').text(t(label));
    for (let j = 0; j < T; j++) {
      const wj = weight(j);
      if (wj > 0 && j !== i) svg.append('line').attr('x1', xs(j)).attr('y1', y).attr('x2', xs(i)).attr('y2', y - 22).attr('class', 'edge attn').attr('stroke-width', 0.5 + 5 * wj).attr('data-weight', exactFloat32(wj));
      svg.append('circle').attr('cx', xs(j)).attr('cy', y).attr('r', 7).attr('class', j === i ? 'node self' : 'node');
    }
    svg.append('circle').attr('cx', xs(i)).attr('cy', y - 22).attr('r', 5).attr('class', 'node out');
  });
  note(host, t('fig.conn.title', { i }));
}

/** §7: the caption's words as buttons; the chosen word's weights over the image's patches, per head. */
function drawCrossmodal(host: HTMLElement, d: Extract<FigureData, { figure: 'crossmodal' }>) {
  note(host, t('fig.cross.result', { steps: d.steps, loss: d.loss.toFixed(3), acc: (100 * d.accuracy).toFixed(1), n: d.evalCount }), { accuracy: d.accuracy });
  const url = new URL(location.href);
  let pairIndex = Math.min(d.pairs.length - 1, Math.max(0, Number(url.searchParams.get('f.crossmodal.pair') ?? 0) || 0));
  let word = Math.max(0, Number(url.searchParams.get('f.crossmodal.word') ?? 0) || 0);
  const bar = document.createElement('div');
  bar.className = 'fig-controls cross-words';
  host.appendChild(bar);
  const body = document.createElement('div');
  body.className = 'cross-body';
  host.appendChild(body);
  const render = () => {
    const p = d.pairs[pairIndex];
    word = Math.min(word, p.words.length - 1);
    bar.innerHTML = `<span class="small">${t('fig.cross.pair')}</span>${d.pairs.map((_, i) => `<button type="button" data-pair="${i}" aria-pressed="${i === pairIndex}">${i + 1}</button>`).join('')}
      <span class="small">${t('fig.cross.word')}</span>${p.words.map((w, i) => `<button type="button" data-word="${i}" aria-pressed="${i === word}">${w}</button>`).join('')}`;
    body.replaceChildren();
    const [H, , N] = p.maps.shape;
    const [S] = p.image.shape;
    const G = d.grid;
    const px = Math.max(8, Math.min(16, Math.floor((Math.min(host.clientWidth || 600, 640) - 40) / (H * S))));
    const fig = d3.select(body).append('figure').attr('class', 'chart').attr('data-chart', 'crossmodal').attr('data-word', word).attr('data-pair', p.index);
    const title = t('fig.cross.title', { caption: p.words.join(' '), word: p.words[word], match: p.match.toFixed(2) });
    fig.append('figcaption').attr('class', 'matrix-title').append('span').attr('class', 't').text(title);
    const svg = fig.append('svg').attr('width', H * (S * px + 24)).attr('height', S * px + 22).attr('role', 'img').attr('aria-label', title);
    const gray = d3.scaleLinear<string>().domain([Math.min(...p.image.data), Math.max(...p.image.data)]).range(['#111', '#eee']);
    for (let h = 0; h < H; h++) {
      const g = svg.append('g').attr('transform', `translate(${h * (S * px + 24)},18)`).attr('data-head', h);
      g.append('text').attr('x', 0).attr('y', -5).attr('class', 'fig-label').text(t('fig.cross.head', { h }));
      for (let y = 0; y < S; y++) for (let x = 0; x < S; x++) g.append('rect').attr('x', x * px).attr('y', y * px).attr('width', px).attr('height', px).attr('fill', gray(p.image.data[y * S + x]));
      const row = p.maps.data.subarray((h * p.words.length + word) * N, (h * p.words.length + word + 1) * N);
      const top = Math.max(...row);
      for (let n = 0; n < N; n++) {
        const P = d.patchSize * px;
        g.append('rect').attr('class', 'patch').attr('x', (n % G) * P).attr('y', Math.floor(n / G) * P).attr('width', P).attr('height', P)
          .attr('fill', '#ff7a00').attr('fill-opacity', 0.8 * (row[n] / top)).attr('stroke', '#ff7a00').attr('stroke-opacity', 0.4).attr('stroke-width', 0.5)
          .attr('data-weight', exactFloat32(row[n])).append('title').text(`${t('fig.cross.patch', { n })}: ${fmt(row[n], 3)}`);
      }
    }
    const node = svg.node()!;
    exportButtons(fig.node()!, () => node, 'attnlab-crossmodal', { svg: t('fig.export.svg'), png: t('fig.export.png') });
  };
  bar.addEventListener('click', (ev) => {
    const b = (ev.target as HTMLElement).closest<HTMLButtonElement>('button');
    if (!b) return;
    if (b.dataset.pair !== undefined) pairIndex = Number(b.dataset.pair);
    else if (b.dataset.word !== undefined) word = Number(b.dataset.word);
    else return;
    writeText('crossmodal', 'pair', String(pairIndex));
    writeText('crossmodal', 'word', String(word));
    render();
    bar.querySelector<HTMLButtonElement>(b.dataset.pair !== undefined ? `button[data-pair="${pairIndex}"]` : `button[data-word="${word}"]`)?.focus();
  });
  render();
  note(host, t('fig.cross.note'));
}

/**
 * §7 series: the held-out series' context, then over the horizon the truth, the trained
 * forecaster's model.forecast and the seasonal-naive baseline, each forecast point carrying its
 * exact value (data-value) for the test that compares it with the engine.
 */
function drawForecast(host: HTMLElement, d: Extract<FigureData, { figure: 'forecast' }>) {
  const T = d.context.length;
  const horizon = d.truth.length;
  const result = t('fig.forecast.result', { pe: t(d.positional === 'time' ? 'fig.forecast.pe.time' : 'fig.forecast.pe.sinusoidal'), steps: d.steps, mse: fmt(d.mse, 3), base: fmt(d.baselineMse, 3), mae: fmt(d.mae, 3), baseMae: fmt(d.baselineMae, 3) });
  note(host, result, { mse: d.mse, baselineMse: d.baselineMse, positional: d.positional });
  const w = Math.min(640, Math.max(300, host.clientWidth || 600));
  const h = 240;
  const m = { top: 30, right: 12, bottom: 34, left: 44 };
  const all = [...d.context, ...d.truth, ...d.forecast, ...d.baseline];
  // Steps relative to the last context step (0): the context is ≤ 0, the forecast 1..horizon.
  const at = (i: number) => i - (T - 1);
  const x = d3.scaleLinear().domain([at(0), at(T + horizon - 1)]).range([m.left, w - m.right]);
  const y = d3.scaleLinear().domain([Math.min(...all), Math.max(...all)]).nice().range([h - m.bottom, m.top]);
  const title = t('fig.forecast.title', { T, horizon });
  const fig = d3.select(host).append('figure').attr('class', 'chart').attr('data-chart', 'forecast');
  fig.append('figcaption').attr('class', 'matrix-title').append('span').attr('class', 't').text(title);
  const svg = fig.append('svg').attr('width', w).attr('height', h).attr('role', 'img')
    .attr('aria-label', `${title}. ${result}`);
  svg.append('g').attr('transform', `translate(0,${h - m.bottom})`).call(d3.axisBottom(x).ticks(6));
  svg.append('g').attr('transform', `translate(${m.left},0)`).call(d3.axisLeft(y).ticks(5));
  svg.append('text').attr('x', (m.left + w) / 2).attr('y', h - 4).attr('text-anchor', 'middle').attr('class', 'fig-label').text(t('fig.forecast.time'));
  // Where the forecast starts.
  svg.append('line').attr('x1', x(0.5)).attr('x2', x(0.5)).attr('y1', m.top).attr('y2', h - m.bottom).attr('class', 'edge').attr('stroke-dasharray', '3,3');
  const line = d3.line<[number, number]>().x((p) => x(p[0])).y((p) => y(p[1]));
  // The horizon's lines start at the last context value, so each reads as a continuation.
  const last: [number, number] = [0, d.context[T - 1]];
  const ahead = (v: number[]) => [last, ...v.map((yv, j): [number, number] => [j + 1, yv])];
  const kinds = [
    ['context', d.context.map((yv, i): [number, number] => [at(i), yv]), '#888', '', t('fig.forecast.context')],
    ['truth', ahead(d.truth), HEAD_COLORS[1], '', t('fig.forecast.truth')],
    ['baseline', ahead(d.baseline), HEAD_COLORS[0], '5,3', t('fig.forecast.baseline')],
    ['forecast', ahead(d.forecast), HEAD_COLORS[2], '', t('fig.forecast.forecast')],
  ] as const;
  kinds.forEach(([name, pts, color, dash, label], i) => {
    svg.append('path').attr('d', line(pts as [number, number][])).attr('fill', 'none').attr('stroke', color).attr('stroke-width', name === 'context' ? 1.2 : 2).attr('stroke-dasharray', dash || null).attr('data-line', name);
    if (name !== 'context') {
      const values = name === 'truth' ? d.truth : name === 'baseline' ? d.baseline : d.forecast;
      values.forEach((v, j) => {
        svg.append('circle').attr('cx', x(j + 1)).attr('cy', y(v)).attr('r', name === 'forecast' ? 3 : 2.2).attr('fill', color)
          .attr('class', 'pt').attr('data-series', name).attr('data-step', j).attr('data-value', exactFloat32(v))
          .append('title').text(`${label}, +${j + 1}: ${fmt(v, 4)}`);
      });
    }
    const lx = m.left + 6 + i * Math.floor((w - m.left - m.right) / 4);
    svg.append('rect').attr('x', lx).attr('y', 8).attr('width', 12).attr('height', 4).attr('fill', color);
    svg.append('text').attr('x', lx + 16).attr('y', 14).attr('class', 'fig-label').text(label);
  });
  const node = svg.node()!;
  exportButtons(fig.node()!, () => node, 'attnlab-forecast', { svg: t('fig.export.svg'), png: t('fig.export.png') });
  note(host, t('fig.forecast.note'));
}
