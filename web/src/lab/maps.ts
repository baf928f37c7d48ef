// The lab's attention maps of one example: one row of heads per layer (keys along the bottom,
// queries down the first head's side), drawn one layer per task, beside the head view. An LSTM has
// none, and an image model draws its attention on the picture instead.
import { attr, span, t } from '../i18n';
import { renderHeatmap } from '../ui/heatmap_canvas';
import { sequentialScale } from '../util/color';
import { mountHeadView, renderHeadView, type HeadViewState } from './head_view';
import { labStore, type LabState } from './state';

export const mapsHtml = () => `
      <h3>${span('lab.maps')} <span class="muted maps-note"></span></h3>
      <p class="maps-none muted" hidden></p>
      <div class="lab-maps-row"><div class="lab-maps"></div><section class="head-view" hidden ${attr('aria-label', 'lab.headView.title')}></section></div>`;

/** Wires the head view under `root`; the returned function draws the maps of a state. */
export function mountMaps(root: HTMLElement): (s: LabState) => void {
  const el = <T extends Element>(sel: string) => root.querySelector<T>(sel)!;
  const headView = el<HTMLElement>('section.head-view');
  let headPick: HeadViewState = { layer: 0, head: 0 };
  mountHeadView(headView, (pick) => {
    headPick = pick;
    renderHeadView(headView, labStore.get().maps, headPick);
  });

  return (s) => {
    const maps = el<HTMLElement>('.lab-maps');
    // The held model decides; before there is one, the form's architecture does.
    const held = s.model?.settings ?? s.settings;
    const lstm = held.architecture === 'lstm';
    // Shapes draw their attention over the images in the picture above; a forecaster's maps are over its context steps.
    const pictured = held.task === 'shapes';
    el<HTMLElement>('.maps-none').hidden = !lstm && !pictured;
    el<HTMLElement>('.maps-none').textContent = t(lstm ? 'lab.mapsNone' : 'lab.mapsPicture');
    if (lstm || pictured) {
      headView.hidden = true;
      el<HTMLElement>('.maps-note').textContent = '';
      maps.replaceChildren();
      delete maps.dataset.geometry;
      return;
    }
    el<HTMLElement>('.maps-note').textContent = !s.maps ? '' : s.mapsStep > 0 ? t('lab.maps.after', { step: s.mapsStep }) : t('lab.maps.before');
    renderHeadView(headView, s.maps, headPick);
    if (!s.maps) {
      maps.replaceChildren();
      delete maps.dataset.geometry;
      return;
    }
    const [L, H, T] = s.maps.shape;
    const geometry = `${L}x${H}x${T}`;
    if (maps.dataset.geometry !== geometry) {
      maps.replaceChildren(
        ...Array.from({ length: L }, (_, l) => {
          const row = document.createElement('div');
          row.className = 'lab-layer';
          row.dataset.layer = String(l);
          return row;
        }),
      );
      maps.dataset.geometry = geometry;
    }
    const labels = s.maps.labels.map((l) => (l === ' ' ? '␣' : l === '\n' ? '↵' : l));
    const cell = Math.max(7, Math.min(18, Math.floor(((maps.clientWidth || 900) - 48 * H) / (H * T))));
    const shown = s.maps;
    const drawLayer = (l: number) => {
      const row = maps.querySelector<HTMLElement>(`.lab-layer[data-layer="${l}"]`);
      if (!row || labStore.get().maps !== shown) return; // replaced meanwhile: the newer maps draw themselves
      for (let h = 0; h < H; h++) {
        const off = (l * H + h) * T * T;
        renderHeatmap(row, {
          name: `lab-map-l${l}-h${h}`,
          title: t('lab.maps.title', { l, h }),
          data: { shape: [T, T], data: shown.data.subarray(off, off + T * T) },
          scale: sequentialScale(1),
          cell,
          rowLabels: h === 0 ? labels : undefined,
          colLabels: labels,
        });
      }
      if (l + 1 < L) setTimeout(() => drawLayer(l + 1), 0);
    };
    drawLayer(0);
  };
}
