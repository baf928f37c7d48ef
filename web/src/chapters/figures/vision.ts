// §7: an image of the shapes task through an untrained ViT or Swin: where the windows sit on the
// patch grid (left) and the attention of each window's middle patch (right).
import * as d3 from 'd3';
import { t } from '../../i18n';
import { HEAD_COLORS } from '../../util/color';
import { exactFloat32 } from '../../util/format';
import { figureExport, note } from './draw';
import { defineFigure } from './figure';
import type { VisionRequest } from './vision.compute';

export const visionFigure = defineFigure({
  id: 'vision',
  controls: [
    { name: 'arch', label: 'ch.fig.vision.arch', values: ['swin', 'vit'], value: 'swin' },
    { name: 'layer', label: 'ch.fig.vision.layer', values: [0, 1], value: 1 },
  ],
  request: (v) => ({ figure: 'vision', arch: v('arch') as VisionRequest['arch'], layer: Number(v('layer')), seed: 3 }),
  draw(host, d) {
    // The image, each patch tinted by the window it belongs to, and the attention of one query
    // patch per window (the window's middle patch) drawn as the opacity of the patches it looks at.
    const [S] = d.image.shape;
    const L = d.layout;
    const [nW, H, N] = d.maps.shape;
    const M = L.window;
    const px = Math.max(8, Math.min(22, Math.floor((Math.min(host.clientWidth || 600, 640) - 40) / (2 * S))));
    const size = S * px;
    const fig = d3.select(host).append('figure').attr('class', 'chart').attr('data-chart', 'vision');
    fig.append('figcaption').attr('class', 'matrix-title').append('span').attr('class', 't').text(t('ch.fig.vision.title', { grid: L.grid, windows: nW, shift: L.shift }));
    const svg = fig.append('svg').attr('width', 2 * size + 30).attr('height', size + 4).attr('role', 'img').attr('aria-label', t('ch.fig.vision.title', { grid: L.grid, windows: nW, shift: L.shift }));
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
    figureExport(fig.node()!, svg.node()!, 'attnlab-vision');
    note(host, t('ch.fig.vision.note'));
  },
});
