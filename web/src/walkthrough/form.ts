// The walkthrough's settings form: "Open a model…" (open_model.ts) and the model shown; the sentence
// (or the lab's model and its input, or the opened model's sentence and layer), the layer's
// architecture, mask, normaliser and number format; the choices that cannot work with the others
// disabled with their reason; "trained in the lab" offered once the lab holds a model. Every
// change computes the walkthrough again (actions.compute).
import { attr, span, t } from '../i18n';
import { labStore, type LabState } from '../lab/state';
import { option } from '../ui/markup';
import { compute } from './actions';
import { followLabModel } from './lab_model';
import { mountOpenModel, openModelHtml, pretrainedFieldsHtml } from './open_model';
import { D_MODELS, EXAMPLES, GENERATE_COUNTS, HEAD_COUNTS, INPUT_SCALES, MASKS, MAX_SEED, MAX_TOKENS, NORMALIZERS, POSITIONALS, PRECISIONS, headsProblem, kvHeadsProblem, ropeProblem, type WalkSettings } from './inputs';

export const formHtml = () => `
      <form class="settings" autocomplete="off" onsubmit="return false" ${attr('aria-label', 'walk.aria.settings')}>${openModelHtml()}
        <label class="field wide">${span('walk.model')}
          <select name="model"><option value="random" data-i18n="walk.model.random">${t('walk.model.random')}</option><option value="trained" disabled></option><option value="pretrained" disabled></option></select>
        </label>
        <label class="field wide trained-only">${span('walk.input')} <span class="hint model-hint"></span>
          <input name="modelInput" type="text" spellcheck="false" ${attr('placeholder', 'walk.input.placeholder')} />
        </label>
        <label class="field trained-only">${span('walk.layer')} <select name="layer"></select></label>${pretrainedFieldsHtml()}
        <label class="field wide random-only">${span('walk.sentence')} <span class="hint sentence-hint"></span>
          <input name="sentence" type="text" spellcheck="false" />
        </label>
        <label class="field wide random-only">${span('walk.context')} <span class="hint" data-i18n="walk.context.hint">${t('walk.context.hint')}</span>
          <input name="context" type="text" spellcheck="false" />
        </label>
        <label class="field wide random-only">${span('walk.example')}
          <select name="example"><option value="" data-i18n="walk.example.choose">${t('walk.example.choose')}</option>${EXAMPLES.map((_, i) => option(i)).join('')}</select>
          <span class="hint example-random" data-i18n="walk.example.random">${t('walk.example.random')}</span>
        </label>
        <label class="field random-only">d_model <select name="dModel">${D_MODELS.map((v) => option(v)).join('')}</select></label>
        <label class="field random-only">${span('form.heads')} <select name="heads">${HEAD_COUNTS.map((v) => option(v)).join('')}</select></label>
        <label class="field random-only">${span('form.kvHeads')} <select name="kvHeads">${HEAD_COUNTS.map((v) => option(v)).join('')}</select></label>
        <label class="field random-only">${span('form.positions')} <select name="positional">${POSITIONALS.map((p) => option(p.id)).join('')}</select></label>
        <label class="field random-only">${span('form.seed')} <input name="seed" type="number" min="0" max="${MAX_SEED}" step="1" /></label>
        <label class="field check random-only"><input name="scale" type="checkbox" /> ${span('walk.scale')}</label>
        <label class="field wide random-only">${span('walk.mask')} <select name="mask">${MASKS.map((m) => option(m.id)).join('')}</select></label>
        <label class="field random-only">${span('walk.normalizer')} <select name="normalizer">${NORMALIZERS.map((n) => option(n)).join('')}</select></label>
        <label class="field random-only">${span('walk.precision')} <select name="precision">${PRECISIONS.map((n) => option(n)).join('')}</select></label>
        <label class="field random-only">${span('walk.inputScale')} <select name="inputScale">${INPUT_SCALES.map((n) => option(n, `×${n}`)).join('')}</select></label>
        <p class="problems" role="alert"></p>
        <ul class="notices" aria-live="polite"></ul>
      </form>`;

export interface WalkForm {
  read(): WalkSettings;
  write(s: WalkSettings): void;
  /** The texts that follow the language beyond the static ones (options, hints). */
  relabel(): void;
  /** Offers the lab's model (and follows its changes); `force` re-reads it after a language switch. */
  followLab(l: LabState, force?: boolean): void;
}

/** Wires the form; `onInput` runs on each change the reader makes (before the walkthrough is computed again). */
export function mountForm(form: HTMLFormElement, root: HTMLElement, onInput: () => void): WalkForm {
  const field = <T extends HTMLInputElement | HTMLSelectElement = HTMLSelectElement>(name: string) => form.elements.namedItem(name) as T;

  const read = (): WalkSettings => {
    const f = new FormData(form);
    return {
      sentence: String(f.get('sentence') ?? ''),
      dModel: Number(f.get('dModel')),
      heads: Number(f.get('heads')),
      kvHeads: Number(f.get('kvHeads')),
      positional: f.get('positional') as WalkSettings['positional'],
      mask: f.get('mask') as WalkSettings['mask'],
      scale: field<HTMLInputElement>('scale').checked,
      // As typed: a seed out of range or not whole is reported (settingsProblems), not changed.
      seed: String(f.get('seed') ?? '').trim() === '' ? NaN : Number(f.get('seed')),
      model: f.get('model') === 'trained' ? 'trained' : f.get('model') === 'pretrained' ? 'pretrained' : 'random',
      layer: Math.max(0, Number(f.get('layer')) || 0),
      modelInput: String(f.get('modelInput') ?? ''),
      context: String(f.get('context') ?? ''),
      normalizer: (f.get('normalizer') ?? 'softmax') as WalkSettings['normalizer'],
      precision: (f.get('precision') ?? 'fp32') as WalkSettings['precision'],
      inputScale: Number(f.get('inputScale') ?? 1),
      pretrainedText: String(f.get('pretrainedText') ?? ''),
      pretrainedLayer: Math.max(0, Number(f.get('pretrainedLayer')) || 0),
      pretrainedGenerate: Number(f.get('pretrainedGenerate')) || GENERATE_COUNTS[1],
    };
  };
  const write = (s: WalkSettings) => {
    const set = (name: string, v: string) => (field<HTMLInputElement>(name).value = v);
    set('sentence', s.sentence);
    set('dModel', String(s.dModel));
    set('heads', String(s.heads));
    set('kvHeads', String(s.kvHeads));
    set('positional', s.positional);
    set('mask', s.mask);
    set('seed', String(s.seed));
    field<HTMLInputElement>('scale').checked = s.scale;
    set('model', s.model);
    set('modelInput', s.modelInput);
    set('context', s.context ?? '');
    set('normalizer', s.normalizer ?? 'softmax');
    set('precision', s.precision ?? 'fp32');
    set('inputScale', String(s.inputScale ?? 1));
    if (s.pretrainedText != null) set('pretrainedText', s.pretrainedText);
    showModelFields(s.model);
    markChoices();
  };
  /**
   * Disables the heads, K/V heads and positions that cannot work with the other choices, each with
   * its reason as the option's title (and on the select, read on hover).
   */
  const markChoices = () => {
    const d = Number(field('dModel').value);
    const heads = Number(field('heads').value);
    const mark = (name: string, why: (o: HTMLOptionElement) => string | null) => {
      const sel = field(name) as HTMLSelectElement;
      const reasons: string[] = [];
      for (const o of Array.from(sel.options)) {
        const r = why(o);
        o.dataset.label ??= o.textContent ?? '';
        o.disabled = r !== null;
        o.title = r ?? '';
        // The open list says "not available" without a hover; the reason is the option's title.
        o.textContent = r ? t('walk.option.unavailable', { label: o.dataset.label }) : o.dataset.label;
        if (r) reasons.push(`${o.dataset.label}: ${r}`);
      }
      sel.title = reasons.length ? t('walk.select.unavailable', { reasons: reasons.join(' ') }) : '';
    };
    mark('heads', (o) => headsProblem(d, Number(o.value)));
    mark('kvHeads', (o) => kvHeadsProblem(heads, Number(o.value)));
    mark('positional', (o) => (o.value === 'rope' ? ropeProblem(d, heads) : null));
  };
  const relabel = () => {
    const options = (name: string, label: (o: HTMLOptionElement) => string | null) => {
      for (const o of Array.from((field(name) as HTMLSelectElement).options)) {
        const l = label(o);
        if (l !== null) o.dataset.label = o.textContent = l;
      }
    };
    options('positional', (o) => POSITIONALS.find((p) => p.id === o.value)?.label() ?? null);
    options('mask', (o) => MASKS.find((m) => m.id === o.value)?.label() ?? null);
    // The empty value is the "choose" line, not example 0 (Number('') is 0).
    options('example', (o) => (o.value === '' ? t('walk.example.choose') : (EXAMPLES[Number(o.value)]?.label() ?? null)));
    options('heads', (o) => o.value);
    options('kvHeads', (o) => o.value);
    form.querySelector<HTMLElement>('.sentence-hint')!.textContent = t('walk.sentence.hint', { n: MAX_TOKENS });
    markChoices();
    openPanel.relabel();
  };
  const showModelFields = (model: WalkSettings['model']) => {
    root.querySelectorAll<HTMLElement>('.random-only').forEach((e) => (e.hidden = model !== 'random'));
    root.querySelectorAll<HTMLElement>('.trained-only').forEach((e) => (e.hidden = model !== 'trained'));
    root.querySelectorAll<HTMLElement>('.pretrained-only').forEach((e) => (e.hidden = model !== 'pretrained'));
  };

  const followLab = followLabModel(form, read, showModelFields);
  // An opened model is shown at once; when the one shown is gone (a failed open), random weights are.
  const modelSelect = field('model');
  const openPanel = mountOpenModel(form, (opened) => {
    const was = modelSelect.value;
    if (opened) modelSelect.value = 'pretrained';
    else if (was === 'pretrained') modelSelect.value = 'random';
    if (!opened && was !== 'pretrained') return;
    showModelFields(read().model);
    onInput();
    void compute(read());
  });

  let debounce: number | undefined;
  form.addEventListener('input', (ev) => {
    const target = ev.target as HTMLInputElement;
    if (target.name === 'modelFiles') return; // the picker opens a model (open_model.ts), then computes
    if (target.name === 'example') {
      const ex = EXAMPLES[Number(target.value)];
      if (ex) field<HTMLInputElement>('sentence').value = ex.sentence;
      target.value = '';
    }
    if (target.name === 'model') showModelFields(read().model);
    // Keep K/V heads valid: default to plain multi-head attention.
    if (target.name === 'heads') field('kvHeads').value = target.value;
    markChoices();
    onInput();
    clearTimeout(debounce);
    debounce = window.setTimeout(() => void compute(read()), ['sentence', 'modelInput', 'context', 'pretrainedText'].includes(target.name) ? 250 : 0);
  });

  labStore.subscribe((l) => followLab(l));
  return { read, write, relabel, followLab };
}
