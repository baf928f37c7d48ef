// "Open a model…" in the walkthrough's form: the file picker (or files dropped on it) for a GPT-2
// checkpoint, the progress bar while the worker reads it, what was opened or why it could not be,
// and the opened model's own fields (its sentence with the token boundaries its tokenizer drew,
// its layer, the tokens to generate). Opening is actions.openModel; the words are open_words.ts.
import { attr, span, t } from '../i18n';
import { option } from '../ui/markup';
import { openModel, openShippedModel, SHIPPED_MODELS, type ShippedModel } from './actions';
import { escapeHtml } from './components/tokens_view';
import { GENERATE_COUNTS } from './inputs';
import { MODEL_FILE_NAMES, sortModelFiles } from './model_files';
import { openedSummary, openError } from './open_words';
import { walkStore, type WalkState } from './state';

export const DEFAULT_PRETRAINED_TEXT = 'The cat sat on the mat because it';
/** The text a shipped model opens with: a Tang couplet for tang, an English sentence for brown. */
const SHIPPED_TEXT: Record<ShippedModel, string> = {
  tang: '白日依山尽，黄河入海流。',
  brown: 'He sat on the river bank and watched the water',
};

export const openModelHtml = () => `
        <div class="field wide open-model" data-phase="none">
          <div class="open-row">
            <button type="button" class="open-button" data-i18n="walk.open">${t('walk.open')}</button>
            <input type="file" name="modelFiles" class="visually-hidden" tabindex="-1" multiple accept=".safetensors,.json,.txt,.bpe" ${attr('aria-label', 'walk.open')} />
            <span class="hint open-hint"></span>
          </div>
          <div class="open-row shipped-row"><span class="hint" data-i18n="walk.shipped">${t('walk.shipped')}</span>
            ${SHIPPED_MODELS.map((m) => `<button type="button" class="shipped-button" data-model="${m}"><code>${m}</code> ${span(`walk.shipped.${m}`)}</button>`).join('')}
          </div>
          <div class="open-progress" role="progressbar" aria-valuemin="0" aria-valuemax="100" hidden><div class="bar"></div></div>
          <p class="open-status" role="status"></p>
          <div class="open-error" role="alert" hidden></div>
        </div>`;

export const pretrainedFieldsHtml = () => `
        <label class="field wide pretrained-only">${span('walk.pretrained.text')} <span class="hint" data-i18n="walk.pretrained.textHint">${t('walk.pretrained.textHint')}</span>
          <input name="pretrainedText" type="text" spellcheck="false" value="${escapeHtml(DEFAULT_PRETRAINED_TEXT)}" />
        </label>
        <p class="field wide pretrained-only token-spans" aria-live="polite"></p>
        <label class="field pretrained-only">${span('walk.layer')} <select name="pretrainedLayer"></select></label>
        <label class="field pretrained-only">${span('walk.pretrained.generate')} <select name="pretrainedGenerate">${GENERATE_COUNTS.map((n) => option(n)).join('')}</select></label>`;

export interface OpenModelPanel {
  /** The texts that follow the language beyond the static ones. */
  relabel(): void;
}

/**
 * Wires the picker in `form`. `use(opened)` switches the form to the opened model (true) or back to
 * random weights when the model it showed is gone (false), then computes the walkthrough again.
 */
export function mountOpenModel(form: HTMLFormElement, use: (opened: boolean) => void): OpenModelPanel {
  const panel = form.querySelector<HTMLElement>('.open-model')!;
  const input = panel.querySelector<HTMLInputElement>('input[name="modelFiles"]')!;
  const modelSelect = form.elements.namedItem('model') as HTMLSelectElement;
  const layerSelect = form.elements.namedItem('pretrainedLayer') as HTMLSelectElement;
  (form.elements.namedItem('pretrainedGenerate') as HTMLSelectElement).value = String(GENERATE_COUNTS[1]);

  const open = async (files: File[]) => {
    if (!files.length) return;
    const info = await openModel(sortModelFiles(files));
    if (!info) return; // the store says why; render() leaves the model that is gone
    showLayers(info.layers);
  };
  const showLayers = (layers: number) => {
    layerSelect.innerHTML = Array.from({ length: layers }, (_, i) => option(i, t('walk.layer.n', { n: i }))).join('');
    layerSelect.value = '0';
    relabelOption();
    use(true);
  };
  panel.querySelector('.open-button')!.addEventListener('click', () => input.click());
  panel.querySelectorAll<HTMLButtonElement>('.shipped-button').forEach((b) =>
    b.addEventListener('click', async () => {
      const name = b.dataset.model as ShippedModel;
      const info = await openShippedModel(name);
      if (!info) return;
      (form.elements.namedItem('pretrainedText') as HTMLInputElement).value = SHIPPED_TEXT[name];
      showLayers(info.layers);
    }),
  );
  input.addEventListener('change', () => {
    const files = Array.from(input.files ?? []);
    input.value = ''; // picking the same files again opens them again
    void open(files);
  });
  // Files dropped on the panel open as picked ones do.
  panel.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    panel.classList.add('drop');
  });
  panel.addEventListener('dragleave', () => panel.classList.remove('drop'));
  panel.addEventListener('drop', (ev) => {
    ev.preventDefault();
    panel.classList.remove('drop');
    void open(Array.from(ev.dataTransfer?.files ?? []));
  });

  const relabelOption = () => {
    const o = modelSelect.querySelector<HTMLOptionElement>('option[value="pretrained"]')!;
    const p = walkStore.get().pretrained;
    o.disabled = p.phase !== 'ready';
    o.textContent = p.info ? t('walk.model.pretrained', { name: p.info.name }) : t('walk.model.pretrainedNone');
  };

  let key = '';
  let phase = walkStore.get().pretrained.phase;
  const render = (s: WalkState) => {
    const p = s.pretrained;
    // A model that could not be opened, or was lost with the engine, is no longer offered.
    if (p.phase !== phase) {
      phase = p.phase;
      relabelOption();
      if ((phase === 'error' || phase === 'none') && modelSelect.value === 'pretrained') use(false);
    }
    const spans = s.settings.model === 'pretrained' ? s.trace?.model?.pretrained?.spans : null;
    const k = `${p.phase}|${p.loaded}|${p.total}|${p.name}|${p.error?.message}|${s.version}|${spans ? 1 : 0}`;
    if (k === key) return;
    key = k;
    panel.dataset.phase = p.phase;
    // Once a model is open, what it is replaces what to pick.
    panel.querySelector<HTMLElement>('.open-hint')!.hidden = p.phase === 'ready';
    const bar = panel.querySelector<HTMLElement>('.open-progress')!;
    bar.hidden = p.phase !== 'loading';
    const pct = p.total > 0 ? Math.round((100 * p.loaded) / p.total) : 0;
    bar.setAttribute('aria-valuenow', String(pct));
    bar.querySelector<HTMLElement>('.bar')!.style.width = `${pct}%`;
    const status = panel.querySelector<HTMLElement>('.open-status')!;
    status.textContent =
      p.phase === 'loading'
        ? t('walk.open.loading', { name: p.name, read: (p.loaded / 2 ** 20).toFixed(1), total: (p.total / 2 ** 20).toFixed(1), pct })
        : p.phase === 'ready' && p.info
          ? openedSummary(p.info, p.ignored)
          : '';
    const err = panel.querySelector<HTMLElement>('.open-error')!;
    err.hidden = p.phase !== 'error';
    if (p.phase === 'error' && p.error) {
      const e = openError(p.name, p.error, p.ignored);
      err.dataset.error = e.kind;
      err.innerHTML = `<p class="error-title"></p><p class="muted error-details"></p>`;
      err.querySelector('.error-title')!.textContent = e.text;
      err.querySelector('.error-details')!.textContent = e.details;
    } else delete err.dataset.error;
    renderSpans(form.querySelector<HTMLElement>('.token-spans')!, s);
  };
  const relabel = () => {
    panel.querySelector<HTMLElement>('.open-hint')!.innerHTML = withFileNames(
      t('walk.open.hint', { names: MODEL_FILE_NAMES.slice(0, 2).join(', ') }),
    );
    relabelOption();
    key = '';
    render(walkStore.get());
  };
  walkStore.subscribe(render);
  relabel();
  return { relabel };
}

/** text with every file name (model.safetensors, vocab.json, ...) as <code>: names are typed as they are, in either language. */
function withFileNames(text: string): string {
  return escapeHtml(text).replace(/[A-Za-z_-]+\.(?:safetensors|json|txt|bpe)\b/g, (name) => `<code>${name}</code>`);
}

/** The sentence as the opened model's tokenizer cut it: one box per token, its id on hover. */
function renderSpans(host: HTMLElement, s: WalkState) {
  const m = s.settings.model === 'pretrained' ? s.trace?.model : null;
  const spans = m?.pretrained?.spans;
  if (!m?.pretrained || !spans) {
    host.textContent = '';
    return;
  }
  const text = m.pretrained!.text;
  host.innerHTML =
    `<span class="muted">${escapeHtml(t('walk.pretrained.boundaries', { n: spans.length }))}</span> ` +
    spans.map((sp, i) => `<span class="tok tok-${i % 2}" data-id="${sp.id}" title="${escapeHtml(t('walk.pretrained.tokenTitle', { i, id: sp.id }))}">${escapeHtml(text.slice(sp.start, sp.end).replace(/ /g, '␣'))}</span>`).join('');
}
