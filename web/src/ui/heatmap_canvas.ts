// A heat-map drawn on one canvas (render layer): for maps that refresh while training runs, where
// the SVG matrix (ui/matrix.ts, one element per cell, with transitions) would cost the page's
// main thread long tasks. Same colour scales and figure markup (figure > figcaption.matrix-title);
// hover shows the exact value through the shared tooltip.
import { t as tr } from '../i18n';
import type { ColorScale } from '../util/color';
import { exactFloat32 } from '../util/format';
import { hideTooltip, showTooltip } from './tooltip';

export interface HeatmapProps {
  name: string;
  title: string;
  /** (R, K) row-major. */
  data: { shape: number[]; data: Float32Array };
  scale: ColorScale;
  /** Pixel size of one cell. */
  cell: number;
  rowLabels?: string[];
  colLabels?: string[];
}

const FONT = '11px ui-monospace, SFMono-Regular, Menlo, monospace';

/** Renders (or redraws in place) a canvas heat-map figure inside `host`. */
export function renderHeatmap(host: HTMLElement, p: HeatmapProps) {
  const [R, K] = p.data.shape;
  let fig = host.querySelector<HTMLElement>(`figure[data-heatmap="${p.name}"]`);
  if (!fig) {
    fig = document.createElement('figure');
    fig.className = 'matrix heatmap';
    fig.dataset.heatmap = p.name;
    fig.innerHTML = '<figcaption class="matrix-title"><span class="t"></span></figcaption><canvas></canvas>';
    host.append(fig);
    const canvas = fig.querySelector('canvas')!;
    canvas.addEventListener('mouseleave', () => hideTooltip());
    canvas.addEventListener('mousemove', (ev) => {
      const q = (canvas as HTMLCanvasElement & { props?: HeatmapProps; origin?: [number, number] }).props;
      const o = (canvas as HTMLCanvasElement & { origin?: [number, number] }).origin;
      if (!q || !o) return;
      const rect = canvas.getBoundingClientRect();
      const j = Math.floor((ev.clientX - rect.left - o[0]) / q.cell), i = Math.floor((ev.clientY - rect.top - o[1]) / q.cell);
      const [rows, cols] = q.data.shape;
      if (i < 0 || j < 0 || i >= rows || j >= cols) return hideTooltip();
      const v = q.data.data[i * cols + j];
      const label = `${q.rowLabels?.[i] ?? tr('ui.tt.row', { i })} · ${q.colLabels?.[j] ?? tr('ui.tt.col', { j })}`;
      showTooltip(`<div class="tt-head">${q.title} [${i}][${j}] <span class="muted">${label}</span></div><div class="tt-val">${exactFloat32(v)}</div>`, ev, canvas);
    });
  }
  fig.querySelector('.t')!.textContent = p.title;
  const canvas = fig.querySelector('canvas')! as HTMLCanvasElement & { props?: HeatmapProps; origin?: [number, number] };
  const chars = (labels?: string[]) => Math.max(0, ...(labels ?? []).map((l) => l.length));
  // Labels at 11 px need ~12 px of height per row and ~7 px per character plus a gap per column:
  // where the cells are smaller, every k-th position is labelled (the tooltip names each cell).
  const rowEvery = Math.max(1, Math.ceil(12 / p.cell));
  const colEvery = p.colLabels ? Math.max(1, Math.ceil((chars(p.colLabels) * 7 + 3) / p.cell)) : 1;
  const colLabels = p.colLabels;
  const left = p.rowLabels ? chars(p.rowLabels) * 7 + 8 : 0, top = 0, bottom = colLabels ? 14 : 0;
  const width = left + K * p.cell, height = top + R * p.cell + bottom;
  const dpr = Math.min(2, window.devicePixelRatio || 1);
  if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
  }
  canvas.props = { ...p, data: { shape: [R, K], data: p.data.data.slice() } };
  canvas.origin = [left, top];
  const ctx = canvas.getContext('2d')!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const gap = p.cell >= 8 ? 1 : 0;
  for (let i = 0; i < R; i++)
    for (let j = 0; j < K; j++) {
      ctx.fillStyle = p.scale.color(p.data.data[i * K + j]);
      ctx.fillRect(left + j * p.cell + gap / 2, top + i * p.cell + gap / 2, p.cell - gap, p.cell - gap);
    }
  ctx.font = FONT;
  ctx.fillStyle = '#6b6560';
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'center';
  p.rowLabels?.forEach((l, i) => i % rowEvery === 0 && ctx.fillText(l, left / 2, top + (i + 0.5) * p.cell));
  colLabels?.forEach((l, j) => j % colEvery === 0 && ctx.fillText(l, left + (j + 0.5) * p.cell, top + R * p.cell + bottom / 2 + 1));
  fig.dataset.labelEvery = `${rowEvery},${colEvery}`;
}
