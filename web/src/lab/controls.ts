// The lab's controls: Train / Pause / Reset, the checkpoint's download and upload, the banner's and
// the comparison's buttons, and "Try the model". Each click is an action (actions.ts); a control
// is enabled when the engine can do what it asks.
import { span, t } from '../i18n';
import type { LabSettings, TryResult } from '../engine/protocol/lab';
import * as actions from './actions';
import { baselineRun } from './compare';
import type { LabForm } from './form';
import { settingsChange } from './settings';
import { labStore, type LabState } from './state';
import { tryHint } from './try_input';

export const buttonsHtml = () => `
      <div class="lab-buttons">
        <button type="button" data-act="train" class="primary">${t('lab.train')}</button>
        <button type="button" data-act="pause" data-i18n="lab.pause">${t('lab.pause')}</button>
        <button type="button" data-act="reset" data-i18n="lab.reset">${t('lab.reset')}</button>
      </div>
      <div class="lab-io">
        <button type="button" data-act="save" data-i18n="lab.save">${t('lab.save')}</button>
        <label class="file-btn">${span('lab.load')}<input type="file" name="checkpoint" accept=".safetensors,application/octet-stream" /></label>
      </div>`;

export const tryHtml = () => `
      <section class="lab-try">
      <h3 data-i18n="lab.try.title">${t('lab.try.title')}</h3>
      <form class="try" onsubmit="return false">
        <input name="prompt" type="text" spellcheck="false" />
        <button type="submit" data-act="try" data-i18n="lab.try.run">${t('lab.try.run')}</button>
        <span class="try-hint muted"></span>
      </form>
      <pre class="try-out"></pre>
      </section>`;

/** Tasks whose models read and write tokens (a series forecaster and an image classifier do not). */
const TOKEN_TASKS_EXCLUDE: LabSettings['task'][] = ['series', 'shapes'];

// Tokens to generate: the answer of a prompt/answer task, one value for recall, a window of text for char-LM.
const tryLength = (s: LabSettings) => (s.task === 'assoc_recall' ? 1 : s.length);
function tryText(s: LabSettings, r: TryResult) {
  if (r.probabilities) {
    const p = r.probabilities[1];
    return `${r.input}  →  ${t(p >= 0.5 ? 'lab.try.balanced' : 'lab.try.notBalanced')} (p(${t('lab.try.balanced')}) = ${p.toFixed(3)})`;
  }
  return s.task === 'char_lm' || s.task === 'text' ? `${r.input}▌${r.output}` : `${r.input}  →  ${r.output}`;
}

/** Wires the controls under `root`; the returned function shows their state. */
export function mountControls(root: HTMLElement, form: LabForm): (s: LabState) => void {
  const el = <T extends Element>(sel: string) => root.querySelector<T>(sel)!;

  root.addEventListener('click', async (ev) => {
    const act = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-act]')?.dataset.act;
    if (!act) return;
    if (act === 'train') void actions.train();
    else if (act === 'pause') await actions.pause();
    else if (act === 'reset') await actions.reset();
    else if (act === 'keep') {
      const s = actions.keepModel();
      if (s) form.write(s);
    } else if (act === 'long-run') await actions.confirmLongRun();
    else if (act === 'save') {
      const r = await actions.save();
      if (!r) return;
      const url = URL.createObjectURL(new Blob([r.bytes as BlobPart], { type: 'application/octet-stream' }));
      Object.assign(document.createElement('a'), { href: url, download: r.filename }).click();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    } else if (act === 'try') {
      const text = (el<HTMLFormElement>('form.try').elements.namedItem('prompt') as HTMLInputElement).value;
      await actions.tryModel(text, tryText, tryLength);
    } else if (act === 'variant-scale' || act === 'variant-norm') {
      // One click: the baseline run's settings with one switch flipped, trained from scratch (a
      // new model); with no run kept yet, the form's settings.
      const s = baselineRun(labStore.get())?.settings ?? labStore.get().settings;
      const settings = act === 'variant-scale' ? { ...s, scale: !s.scale } : { ...s, norm: s.norm === 'pre' ? ('post' as const) : ('pre' as const) };
      form.write(settings);
      actions.changeSettings(settings);
      void actions.train();
    } else if (act === 'runs-clear') actions.clearRuns();
  });
  el<HTMLElement>('section.compare').addEventListener('change', (ev) => {
    const id = (ev.target as HTMLInputElement).dataset.compare;
    if (id) actions.toggleCompare(Number(id));
  });

  el<HTMLInputElement>('input[name="checkpoint"]').addEventListener('change', async (ev) => {
    const input = ev.target as HTMLInputElement;
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await file.arrayBuffer());
    } catch (e) {
      actions.checkpointFileUnreadable(file.name, e);
      return;
    }
    const settings = await actions.loadCheckpoint(file.name, bytes);
    if (settings) form.write(settings);
  });

  return (s) => {
    const available = s.phase !== 'unavailable';
    root.classList.toggle('unavailable', !available);
    root.querySelectorAll<HTMLButtonElement>('.lab-buttons button, .lab-io button, form.try button').forEach((b) => (b.disabled = !available));
    el<HTMLInputElement>('input[name="checkpoint"]').disabled = !available;
    const change = s.model ? settingsChange(s.model.settings, s.settings) : 'model';
    el<HTMLButtonElement>('button[data-act="train"]').textContent =
      s.phase === 'paused' && change === 'none' ? t('lab.resume') : s.model && change !== 'model' && s.phase !== 'error' && s.phase !== 'ready' ? t('lab.trainMore', { n: s.settings.steps }) : t('lab.train');
    el<HTMLElement>('.try-hint').textContent = s.model ? tryHint(s.model.settings) : t('lab.try.first');
    const tokens = s.model?.task.kind !== 'regression' && s.model?.settings.task !== 'shapes';
    // The box is for token models only: hidden (not shown disabled) for the series and image tasks,
    // the model's task when there is one, else the form's.
    el<HTMLElement>('section.lab-try').hidden = s.model ? !tokens : TOKEN_TASKS_EXCLUDE.includes(s.settings.task);
    el<HTMLInputElement>('form.try input[name="prompt"]').disabled = !s.model || !tokens;
    el<HTMLButtonElement>('form.try button').disabled = !s.model || !tokens;
    const out = el<HTMLElement>('.try-out');
    out.textContent = s.tryOutput?.text ?? '';
    out.classList.toggle('error', Boolean(s.tryOutput?.error));
  };
}
