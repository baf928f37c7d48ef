// The Heads tab ("Heads" / 「注意力头」): the walkthrough's model read head by head. A header says
// which model and text (both chosen in the walkthrough, or a shipped model opened from here); then
// the sections container: the gallery (gallery.ts) beside "switch a head off" (ablation_view.ts),
// and any further section a file of this folder appends to `sections` (mountHeads' return).
// Reads headsStore and walkStore; changes state only through actions.ts.
import { REPEAT_TOKENS, type HeadsInput } from '../engine/protocol/heads';
import { attr, onLang, span, t, translate } from '../i18n';
import { SHIPPED_MODELS, type ShippedModel } from '../walkthrough/actions';
import { escapeHtml } from '../walkthrough/components/tokens_view';
import { walkStore, type WalkState } from '../walkthrough/state';
import { allOn, follow, setMethod, setReading, setSort, toggleHead } from './actions';
import { ablationHtml, renderAblation } from './ablation_view';
import { renderGallery } from './gallery';
import { headKey, headsStore, type HeadsState } from './state';
import { scoreName } from './words';

export interface HeadsHooks {
  /** Opens the walkthrough on this layer and head of the model. */
  openHead(layer: number, head: number): void;
  /** Opens a shipped model in the walkthrough (as its own buttons do). */
  openShipped(name: ShippedModel): void;
}

/**
 * The walkthrough's model as the gallery reads it (its text, or a random sequence repeated), with a
 * key that changes when the model or what it reads does (the text by default); null: random weights.
 */
export function inputOf(w: WalkState, reading: HeadsState['reading'] = 'text'): { input: HeadsInput | null; key: string } {
  const s = w.settings;
  const repeat = reading === 'repeat' ? REPEAT_TOKENS : 0;
  if (s.model === 'pretrained' && w.pretrained.phase === 'ready' && w.pretrained.info) {
    const text = s.pretrainedText ?? '';
    return { input: { source: 'pretrained', text, repeat }, key: `pretrained|${w.pretrained.info.name}|${w.pretrained.info.parameters}|${text}|${repeat}` };
  }
  // The lab's model changes as it trains: the walkthrough traces it again, and so does the gallery.
  if (s.model === 'trained') return { input: { source: 'trained', text: s.modelInput, repeat }, key: `trained|${w.version}|${s.modelInput}|${repeat}` };
  return { input: null, key: 'random' };
}

export function mountHeads(root: HTMLElement, hooks: HeadsHooks) {
  root.innerHTML = `
  <div class="heads">
    <header class="heads-head">
      <h2 data-i18n="heads.title">${t('heads.title')}</h2>
      <p class="muted" data-i18n="heads.intro">${t('heads.intro')}</p>
      <label class="field reading">${span('heads.reading')} <select name="reading"><option value="text"></option><option value="repeat"></option></select></label>
      <p class="heads-model" aria-live="polite"></p>
      <div class="heads-random" hidden>
        <p data-i18n="heads.random">${t('heads.random')}</p>
        <div class="heads-shipped">${SHIPPED_MODELS.map((m) => `<button type="button" data-shipped="${m}"><code>${m}</code> ${span(`walk.shipped.${m}`)}</button>`).join('')}</div>
      </div>
    </header>
    <div class="heads-sections">
      <div class="heads-main">
        <section class="heads-panel heads-gallery" data-section="gallery" ${attr('aria-label', 'heads.gallery')}>
          <div class="gallery-bar">
            <h3 data-i18n="heads.gallery">${t('heads.gallery')}</h3>
            <label class="field sort">${span('heads.sort')} <select name="sort"></select></label>
          </div>
          <p class="muted small" data-i18n="heads.gallery.about">${t('heads.gallery.about')}</p>
          <p class="heads-status" role="status"></p>
          <ul class="gallery"></ul>
        </section>
        <section class="heads-panel heads-ablation" data-section="ablation" ${attr('aria-label', 'heads.ablation')}>
          <h3 data-i18n="heads.ablation">${t('heads.ablation')}</h3>
          <p class="muted small" data-i18n="heads.ablation.about">${t('heads.ablation.about')}</p>
          <div class="abl">${ablationHtml()}</div>
        </section>
      </div>
    </div>
  </div>`;
  const sections = root.querySelector<HTMLElement>('.heads-sections')!;
  const list = root.querySelector<HTMLElement>('ul.gallery')!;
  const abl = root.querySelector<HTMLElement>('.abl')!;
  const sortSelect = root.querySelector<HTMLSelectElement>('select[name="sort"]')!;
  let visible = false;

  root.querySelectorAll<HTMLButtonElement>('[data-shipped]').forEach((b) => b.addEventListener('click', () => hooks.openShipped(b.dataset.shipped as ShippedModel)));
  sortSelect.addEventListener('change', () => setSort(sortSelect.value));
  const readingSelect = root.querySelector<HTMLSelectElement>('select[name="reading"]')!;
  const relabelReading = () => {
    readingSelect.options[0].textContent = t('heads.reading.text');
    readingSelect.options[1].textContent = t('heads.reading.repeat', { n: REPEAT_TOKENS });
  };
  relabelReading();
  readingSelect.addEventListener('change', () => {
    setReading(readingSelect.value === 'repeat' ? 'repeat' : 'text');
    followWalk(walkStore.get());
  });
  abl.addEventListener('change', (ev) => {
    const el = ev.target as HTMLSelectElement;
    if (el.name === 'method') setMethod(el.value as HeadsState['method']);
  });
  abl.addEventListener('click', (ev) => {
    if ((ev.target as HTMLElement).closest('[data-act="all-on"]')) allOn();
  });
  list.addEventListener('change', (ev) => {
    const box = ev.target as HTMLInputElement;
    const c = box.closest<HTMLElement>('.head-card');
    if (c && box.dataset.act === 'off') toggleHead(Number(c.dataset.layer), Number(c.dataset.head), box.checked);
  });
  list.addEventListener('click', (ev) => {
    const b = (ev.target as HTMLElement).closest<HTMLElement>('[data-act="open"]');
    const c = b?.closest<HTMLElement>('.head-card');
    if (c) hooks.openHead(Number(c.dataset.layer), Number(c.dataset.head));
  });

  const followWalk = (w: WalkState) => {
    if (!visible) return;
    const { input, key } = inputOf(w, headsStore.get().reading);
    follow(input, key);
  };

  let galleryKey = '';
  const render = (s: HeadsState) => {
    const g = s.gallery;
    root.querySelector<HTMLElement>('.heads-random')!.hidden = s.input !== null;
    root.querySelector<HTMLElement>('.reading')!.hidden = s.input === null;
    readingSelect.value = s.reading;
    root.querySelector<HTMLElement>('.heads-main')!.hidden = s.input === null;
    const model = root.querySelector<HTMLElement>('.heads-model')!;
    const what = g ? (g.repeat ? t('heads.model.repeat', { n: g.repeat }) : t('heads.model.text', { tokens: g.tokens.length })) : '';
    model.innerHTML = g ? escapeHtml(t('heads.model', { name: g.name, layers: g.layers, heads: g.heads, what })) + ` <span class="heads-text">${g.labels.map((l) => `<span class="tok">${escapeHtml(l)}</span>`).join('')}</span>` : '';
    const status = root.querySelector<HTMLElement>('.heads-status')!;
    status.dataset.status = s.status;
    status.textContent = s.status === 'computing' ? t('heads.computing') : s.status === 'error' ? (s.error ?? '') : g ? t('heads.computed', { n: g.scores.length, ms: Math.round(g.elapsedMs) }) : '';
    const key = g ? `${g.tokens.join(',')}|${g.name}|${s.sort}|${t('heads.off')}|${g.elapsedMs}` : '';
    if (key !== galleryKey) {
      galleryKey = key;
      if (g) {
        sortSelect.innerHTML = [`<option value="layer">${escapeHtml(t('heads.sort.layer'))}</option>`, ...g.scoreNames.map((k) => `<option value="${k}">${escapeHtml(scoreName(k))}</option>`)].join('');
        sortSelect.value = s.sort;
        renderGallery(list, g, s.sort, s.off);
      } else list.innerHTML = '';
    }
    list.querySelectorAll<HTMLElement>('.head-card').forEach((c) => {
      const off = s.off.includes(headKey(Number(c.dataset.layer), Number(c.dataset.head)));
      c.classList.toggle('off', off);
      c.querySelector<HTMLInputElement>('input[data-act="off"]')!.checked = off;
    });
    renderAblation(abl, s, g && !g.repeat && s.input?.text.trim() ? s.input.text : g ? g.labels.join(g.source === 'pretrained' ? '' : ' ') : '');
  };
  headsStore.subscribe(render);
  walkStore.subscribe(followWalk);
  onLang(() => {
    translate(root);
    relabelReading();
    abl.innerHTML = ablationHtml();
    galleryKey = '';
    render(headsStore.get());
  });
  render(headsStore.get());
  return {
    sections,
    show() {
      visible = true;
      followWalk(walkStore.get());
    },
    hide() {
      visible = false;
    },
  };
}
