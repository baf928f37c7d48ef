// The training lab view: the settings form (form.ts, mirrored in the URL), its controls
// (controls.ts: train / pause / reset, checkpoints, trying the model), the banner (banner.ts), live
// curves (curves.ts) with a text model's live sample beside them (sample.ts), the comparison of finished runs (compare.ts), a series or shapes model's
// picture (picture.ts) and the attention maps of a fixed input (maps.ts). Renders labStore; every
// engine call and store change is an action (actions.ts).
import { onLang, t, translate } from '../i18n';
import * as actions from './actions';
import { bannerHtml, formatEta, lastStep, renderBanner } from './banner';
import { linkCharts } from './charts';
import { mountCompare, renderCompare } from './compare';
import { buttonsHtml, mountControls, tryHtml } from './controls';
import { renderCurves } from './curves';
import { renderSample } from './sample';
import { formHtml, mountForm } from './form';
import { mapsHtml, mountMaps } from './maps';
import { mountPicture, renderPicture, type PicturePick } from './picture';
import { settingsFromUrl, TASKS } from './settings';
import { labStore, type LabState } from './state';

export function mountLab(root: HTMLElement) {
  root.innerHTML = `
  <div class="lab">
    <aside class="lab-side">${formHtml()}${buttonsHtml()}
      <p class="muted small" data-i18n="lab.urlNote">${t('lab.urlNote')}</p>
    </aside>
    <section class="lab-main">
      ${bannerHtml()}
      <div class="lab-progress">
        <div class="progress"><div class="bar"></div></div>
        <span class="lab-stats"></span>
      </div>
      <div class="lab-curves-row">
        <div class="curves"></div>
        <section class="lab-sample" hidden>
          <h3 data-i18n="lab.sample.title">${t('lab.sample.title')}</h3>
          <p class="sample-note muted small"></p>
          <pre class="sample-out" lang=""></pre>
        </section>
      </div>
      <section class="compare"></section>
      <section class="lab-picture" hidden></section>${mapsHtml()}${tryHtml()}
    </section>
  </div>`;

  const el = <T extends Element>(sel: string) => root.querySelector<T>(sel)!;
  const form = mountForm(el<HTMLFormElement>('form.lab-settings'));
  const renderControls = mountControls(root, form);
  const renderMaps = mountMaps(root);
  mountCompare(el<HTMLElement>('section.compare'));
  let picturePick: PicturePick = { layer: 0, head: 0, query: null };
  mountPicture(el<HTMLElement>('section.lab-picture'), (change) => {
    picturePick = { ...picturePick, ...change };
    renderPicture(el<HTMLElement>('section.lab-picture'), labStore.get().picture, picturePick);
  });

  const initial = settingsFromUrl(new URL(location.href));
  actions.restore(initial);
  form.write(initial);

  // Curves and maps are drawn outside the store's frame, each in its own task (maps one layer per
  // task), so that no single main-thread task adds them all up (the long-task budget is 50 ms on a
  // busy laptop). Each draws the latest state when its task runs.
  const queued = new Set<string>();
  function later(what: string, draw: (s: LabState) => void) {
    if (queued.has(what)) return;
    queued.add(what);
    setTimeout(() => {
      queued.delete(what);
      draw(labStore.get());
    }, 0);
  }
  const drawCurves = (s: LabState) => renderCurves(el<HTMLElement>('.curves'), s.metrics, s.model?.settings ?? s.settings, actions.runTarget(s));

  function render(s: LabState, prev?: LabState) {
    renderControls(s);
    el<HTMLElement>('.task-what').textContent = TASKS.find((x) => x.id === s.settings.task)?.what() ?? '';
    form.render(s, prev);
    // The banner changes with settings and phases, not with each metrics batch.
    const changed = (k: keyof LabState) => !prev || s[k] !== prev[k];
    if (['settings', 'phase', 'model', 'error', 'longRun', 'message', 'engine', 'engineError'].some((k) => changed(k as keyof LabState))) renderBanner(el<HTMLElement>('.lab-banner'), s);

    const done = lastStep(s);
    const total = actions.runTarget(s);
    el<HTMLElement>('.lab-progress .bar').style.width = `${Math.min(100, (done / Math.max(1, total)) * 100)}%`;
    const eta = s.stepsPerSecond > 0 && s.phase === 'training' ? (total - done) / s.stepsPerSecond : null;
    // A total from an invalid steps field (the form names the problem) is not shown.
    el<HTMLElement>('.lab-stats').textContent =
      t('lab.stats.step', { done, total: Number.isInteger(total) && total > 0 ? ` / ${total}` : '' }) +
      (s.stepsPerSecond ? ` · ${t('lab.stats.rate', { rate: s.stepsPerSecond.toFixed(1) })}` : '') +
      (eta != null ? ` · ${t('lab.stats.eta', { eta: formatEta(eta) })}` : '');

    // Curves and maps redraw only when their data changed: metrics arrive ten times a second, and
    // re-joining every map cell (with its transition) each time costs long main-thread tasks.
    if (!prev || s.metrics !== prev.metrics || total !== actions.runTarget(prev)) later('curves', drawCurves);
    if (!prev || s.runs !== prev.runs || s.compare !== prev.compare || changed('phase') || changed('settings')) later('compare', (st) => renderCompare(el<HTMLElement>('section.compare'), st));
    if (!prev || s.maps !== prev.maps || s.mapsStep !== prev.mapsStep || changed('model') || changed('settings')) later('maps', renderMaps);
    if (!prev || s.sample !== prev.sample || changed('model') || changed('settings')) renderSample(el<HTMLElement>('section.lab-sample'), s);
    if (!prev || s.picture !== prev.picture) later('picture', (st) => renderPicture(el<HTMLElement>('section.lab-picture'), st.picture, picturePick));
  }

  linkCharts(el<HTMLElement>('.curves'));
  // Charts take their host's width: redraw them when it changes (e.g. the lab tab is shown).
  let curvesWidth = 0;
  new ResizeObserver(() => {
    const w = el<HTMLElement>('.curves').clientWidth;
    if (w !== curvesWidth) later('curves', drawCurves);
    curvesWidth = w;
  }).observe(el<HTMLElement>('.curves'));

  labStore.subscribe(render);
  form.relabel();
  translate(root);
  render(labStore.get());
  // A language switch redraws every text; the settings, the model and a running training stay.
  onLang(() => {
    translate(root);
    form.relabel();
    render(labStore.get());
    later('curves', drawCurves);
  });
}
