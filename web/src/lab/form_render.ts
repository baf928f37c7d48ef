// What the lab's settings form shows of a state: the task's own ranges and labels, the problems
// the engine would refuse (in the form's words), the fields an LSTM or an image model does not
// read (kept, disabled, saying why), and the engine's parameter count of the form's model.
import { t } from '../i18n';
import type { LabSettings } from '../engine/protocol/lab';
import { taskLimits, TEXT } from '../engine/protocol/limits';
import { ARCHITECTURES, labProblems, rangeLabel, taskArchitectures, TRANSFORMER_ONLY } from './settings';
import type { LabState } from './state';
import { CORPUS_TOKENS } from './text_source';

const el = <T extends Element>(form: HTMLFormElement, sel: string) => form.querySelector<T>(sel)!;

/** The per-task labels and ranges of the task-dependent fields, the problems, the fields in use. */
export function renderFields(form: HTMLFormElement, s: LabState) {
  const limits = taskLimits(s.settings.task);
  el<HTMLElement>(form, '[data-label="length"]').textContent = rangeLabel(limits.length);
  Object.assign(el<HTMLInputElement>(form, 'input[name="length"]'), { min: String(limits.length.min), max: String(limits.length.max) });
  el<HTMLElement>(form, '[data-field="vocab"]').hidden = !limits.vocab;
  if (limits.vocab) {
    el<HTMLElement>(form, '[data-label="vocab"]').textContent = rangeLabel(limits.vocab);
    Object.assign(el<HTMLInputElement>(form, 'input[name="vocab"]'), { min: String(limits.vocab.min), max: String(limits.vocab.max) });
  }
  const problems = labProblems(s.settings);
  for (const input of form.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input, select'))
    input.setAttribute('aria-invalid', String(problems.some((p) => p.field === input.name)));
  el<HTMLElement>(form, '.problems').replaceChildren(...problems.map((p) => Object.assign(document.createElement('li'), { textContent: p.message })));
  // While a run trains, its settings are fixed: pause to change them. An LSTM's form keeps the
  // Transformer-only fields (switching back restores them) but disables them, saying why.
  const lstm = s.settings.architecture === 'lstm';
  // An image model sets its own positions (a ViT learns one per patch, a Swin reads them from its windows).
  const image = s.settings.task === 'shapes';
  for (const input of form.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input, select')) {
    const unusedByImage = image && input.name === 'positional';
    const unused = (lstm && TRANSFORMER_ONLY.includes(input.name as keyof LabSettings)) || unusedByImage;
    input.disabled = s.phase === 'training' || unused;
    input.closest('label')?.classList.toggle('unused', unused);
    if (unused) input.closest('label')!.title = t(unusedByImage ? 'lab.imagePositions' : 'lab.transformerOnly');
    else input.closest('label')?.removeAttribute('title');
  }
  el<HTMLElement>(form, '.arch-note').hidden = !lstm;
  // The architectures the task trains (images: ViT or Swin; sequences: Transformer or LSTM).
  const archs = taskArchitectures(s.settings.task);
  for (const o of Array.from((form.elements.namedItem('architecture') as HTMLSelectElement).options)) o.disabled = !archs.includes(o.value as LabSettings['architecture']);
}

/** The engine's parameter count of the form's model, and of the model held (they differ once the form changed). */
export function renderParameterCount(form: HTMLFormElement, s: LabState) {
  const arch = (a: LabSettings['architecture']) => ARCHITECTURES.find((x) => x.id === a)?.label ?? a;
  const count = (n: number) => n.toLocaleString('en-US');
  const ofForm = s.formParameters ? t('lab.params.form', { arch: arch(s.formParameters.architecture), n: count(s.formParameters.count) }) : '';
  const held = s.model ? t('lab.params.held', { arch: arch(s.model.settings.architecture), n: count(s.model.parameters) }) : '';
  el<HTMLElement>(form, '.param-count').textContent = [ofForm, held].filter(Boolean).join(' · ');
}

/** Train on text's fields: the corpus, the reader's file, which tokens it trains on, a corpus's fetch. */
export function renderTextSource(form: HTMLFormElement, s: LabState) {
  const text = s.settings.task === 'text';
  el<HTMLElement>(form, '.text-source').hidden = !text;
  if (!text) return;
  const file = s.settings.corpus === 'file';
  el<HTMLElement>(form, '.text-file').hidden = !file;
  el<HTMLElement>(form, '.text-file-name').hidden = !file;
  el<HTMLElement>(form, '.text-file-name').textContent = s.textFile ? t('lab.text.picked', { name: s.textFile }) : t('lab.text.noFile');
  const tokens = CORPUS_TOKENS[s.settings.corpus];
  el<HTMLElement>(form, '.text-tokens').textContent = t(tokens === 'char' ? 'lab.text.tokens.char' : 'lab.text.tokens.bpe', { chars: TEXT.chars, merges: TEXT.merges });
  const load = s.textLoad;
  el<HTMLElement>(form, '.text-load').hidden = !load;
  if (!load) return;
  const mb = (n: number) => (n / 1e6).toFixed(1);
  el<HTMLElement>(form, '.text-load .bar').style.width = load.total ? `${Math.min(100, (100 * load.loaded) / load.total)}%` : '0%';
  el<HTMLElement>(form, '.text-load-note').textContent = load.total
    ? t('lab.text.loading', { name: load.name, loaded: mb(load.loaded), total: mb(load.total) })
    : t('lab.text.loadingUnknown', { name: load.name, loaded: mb(load.loaded) });
}
