// Train on text's live sample: what the model writes from the corpus's prompt, every few steps
// while it trains (the worker's Model.continueText, posted as 'lab.sample'), beside the loss curve.
import { t } from '../i18n';
import { TEXT } from '../engine/protocol/limits';
import type { LabState } from './state';

export function renderSample(host: HTMLElement, s: LabState) {
  const settings = s.model?.settings ?? s.settings;
  const shown = settings.task === 'text' && s.model !== null;
  host.hidden = !shown;
  host.closest('.lab-curves-row')?.classList.toggle('with-sample', shown);
  if (!shown) return;
  const note = host.querySelector<HTMLElement>('.sample-note')!;
  const out = host.querySelector<HTMLElement>('.sample-out')!;
  out.lang = settings.corpus === 'tang' ? 'zh' : settings.corpus === 'brown' ? 'en' : '';
  if (!s.sample) {
    note.textContent = t('lab.sample.waiting', { every: TEXT.sampleEvery });
    out.replaceChildren();
    return;
  }
  note.textContent = t('lab.sample.note', { step: s.sample.step, every: TEXT.sampleEvery, seed: settings.seed });
  const prompt = Object.assign(document.createElement('span'), { className: 'sample-prompt', textContent: s.sample.prompt });
  const text = Object.assign(document.createElement('span'), { className: 'sample-text', textContent: s.sample.text });
  out.replaceChildren(prompt, text);
}
