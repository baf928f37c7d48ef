// The walkthrough view: the settings form (form.ts), the player and step list (controls.ts) and the
// current step's stage and explanation (stage.ts). Reads walkStore; changes it only through
// actions.ts. The settings are kept in the URL (url.ts) while they are the random-weights layer's.
import { attr, onLang, t, translate } from '../i18n';
import { labStore } from '../lab/state';
import { compute, gotoStep, pause, restore, setHead } from './actions';
import { mountControls, playerHtml, stepsHtml } from './controls';
import { formHtml, mountForm } from './form';
import { followLens, lensStore } from './lens';
import { mountStage } from './stage';
import { STEPS } from './steps';
import { walkStore, type WalkState } from './state';
import { walkFromUrl, walkToUrl } from './url';

export function mountWalkthrough(root: HTMLElement) {
  // The stage comes first in the document (and so in the tab order and on a phone's one column);
  // on wide screens the grid puts the settings beside it, on the left.
  root.innerHTML = `
  <div class="walk">
    <section class="walk-main" ${attr('aria-label', 'walk.aria.main')}>${playerHtml()}
      <header class="step-head">
        <h2 class="step-title" aria-live="polite"></h2>
        <div class="head-picker" role="group" ${attr('aria-label', 'walk.aria.head')}></div>
        <a class="to-settings" href="#walk-settings" data-i18n="walk.toSettings">${t('walk.toSettings')}</a>
      </header>
      <p class="cross-note" hidden></p>
      <p class="numerics-strip" hidden></p>
      <p class="beat-caption"></p>
      <div class="stage-wrap"><div class="stage" data-stage=""></div><div class="stage-error" role="alert" hidden></div></div>
      <div class="explain"></div>
      <p class="status"></p>
    </section>
    <aside class="walk-side" id="walk-settings">${formHtml()}${stepsHtml()}
    </aside>
  </div>`;

  // ---- settings <-> URL: a link reopens this walkthrough (url.ts) ----
  // A link's values that cannot be used are reported (urlNotices) and the address bar is corrected
  // to what is shown, so the URL and the form always agree.
  const openedAt = new URL(location.href);
  const fromUrl = walkFromUrl(openedAt);
  // Shown until the reader changes a setting (then the form, not the link, describes the walkthrough).
  let urlNotices = fromUrl.notices;
  restore(fromUrl);
  const urlOf = (s: WalkState, base: URL) => walkToUrl({ settings: s.settings, speed: s.speed, step: s.step, head: s.head }, base);
  const urlKey = (s: WalkState) => urlOf(s, new URL('http://k/')).search;
  // A clean link is left as it is until the reader changes something; a corrected one is rewritten at once.
  let writtenKey = urlNotices.length ? '' : urlKey(walkStore.get());
  const followUrl = (s: WalkState) => {
    if (s.settings.model !== 'random' || root.hidden) return;
    const key = urlKey(s);
    if (key === writtenKey) return;
    writtenKey = key;
    history.replaceState(null, '', urlOf(s, new URL(location.href)));
  };

  const form = mountForm(root.querySelector<HTMLFormElement>('form.settings')!, root, () => (urlNotices = []));
  const controls = mountControls(root);
  const stage = mountStage(root, () => render(walkStore.get()));
  function render(s: WalkState) {
    controls.render(s);
    stage.render(s, urlNotices);
  }
  const relabel = () => {
    form.relabel();
    controls.relabel();
  };
  relabel();
  form.write(walkStore.get().settings);

  // The form is the source of the settings; the store only follows it.
  walkStore.subscribe((s) => render(s));
  walkStore.subscribe(followUrl);
  // The logit lens under the output step: asked for when that step shows a trained decoder, drawn when it comes.
  walkStore.subscribe((s) => followLens(s, STEPS[s.step].id));
  lensStore.subscribe(() => {
    followLens(walkStore.get(), STEPS[walkStore.get().step].id);
    render(walkStore.get());
  });
  form.followLab(labStore.get());
  render(walkStore.get());
  // A language switch redraws every text in place: the settings, the step, the head, the player
  // and the trace stay as they are.
  onLang(() => {
    translate(root);
    relabel();
    form.followLab(labStore.get(), true);
    // The link's notices, while shown, are said again in the new language.
    if (urlNotices.length) urlNotices = walkFromUrl(openedAt).notices;
    stage.invalidate();
    render(walkStore.get());
    // An error in the old language (the settings' problems, the engine's refusal introduced in
    // words) is said again in the new one.
    if (walkStore.get().status === 'error') void compute(form.read());
  });
  /** Shows layer `layer`, head `head` of the model shown (the Heads tab's gallery), on its attention weights. */
  const openHead = (layer: number, head: number) => {
    const s = form.read();
    const select = root.querySelector<HTMLSelectElement>(`select[name="${s.model === 'pretrained' ? 'pretrainedLayer' : 'layer'}"]`)!;
    select.value = String(layer);
    setHead(head);
    gotoStep(STEPS.findIndex((step) => step.id === 'softmax'));
    return compute(form.read());
  };
  /** Opens a shipped model, as its button in the form does. */
  const openShipped = (name: string) => root.querySelector<HTMLButtonElement>(`.shipped-button[data-model="${name}"]`)!.click();
  return { start: () => compute(form.read()), pause, openHead, openShipped };
}
