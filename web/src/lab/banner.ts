// The lab's banner: one sentence on what the lab is doing or what went wrong (the engine's own text
// one click away), and the buttons a situation offers (train a long run anyway, keep the model).
import { t } from '../i18n';
import { settingsChange } from './settings';
import type { LabState } from './state';

export const bannerHtml = () =>
  `<div class="lab-banner" role="status"><span class="text"></span><span class="actions"></span><details class="details" hidden><summary data-i18n="lab.details">${t('lab.details')}</summary><pre></pre></details></div>`;

/** The step the lab has shown last (0 before any). */
export const lastStep = (s: LabState) => (s.metrics.length ? s.metrics[s.metrics.length - 1].step : 0);

/** A duration in the page's words. */
export function formatEta(seconds: number) {
  if (!Number.isFinite(seconds)) return '—';
  if (seconds < 60) return t('lab.eta.s', { s: Math.ceil(seconds) });
  if (seconds < 3600) return t('lab.eta.min', { m: Math.floor(seconds / 60), s: Math.floor(seconds % 60) });
  return t('lab.eta.h', { h: Math.floor(seconds / 3600), m: Math.floor((seconds % 3600) / 60) });
}

function phaseText(s: LabState): string {
  switch (s.phase) {
    case 'idle':
      return t('lab.phase.idle');
    case 'ready':
      return t('lab.phase.ready');
    case 'training':
      return t('lab.phase.training');
    case 'paused':
      return t('lab.phase.paused');
    case 'done':
      return t('lab.phase.done', { n: s.settings.steps });
    case 'error':
      return t('lab.phase.error');
    default:
      return '';
  }
}

/** What the banner says, and which buttons it offers. */
export function renderBanner(banner: HTMLElement, s: LabState) {
  const text = banner.querySelector<HTMLElement>('.text')!;
  const acts = banner.querySelector<HTMLElement>('.actions')!;
  const details = banner.querySelector<HTMLDetailsElement>('.details')!;
  const button = (act: string, label: string) => `<button type="button" data-act="${act}">${label}</button>`;
  let kind = s.phase as string;
  let actionsHtml = '';
  let detail: string | null = null;
  if (!s.engine && !s.engineError) text.textContent = s.message ?? t('walk.status.loading');
  else if (s.engineError) text.textContent = t('page.engineLoadFailed', { message: s.engineError });
  else if (s.phase === 'unavailable') {
    text.innerHTML = t('lab.unavailable', { flavour: s.engine?.flavour ?? '', missing: s.engine?.trainingMissing.join(', ') ?? '' });
  } else if (s.error) {
    kind = 'error';
    text.textContent = s.error.text;
    detail = s.error.details;
  } else if (s.longRun) {
    kind = 'warning';
    text.textContent = t('lab.longRun', { eta: formatEta(s.longRun.seconds), rate: s.longRun.stepsPerSecond.toFixed(1) });
    actionsHtml = button('long-run', t('lab.longRun.anyway', { eta: formatEta(s.longRun.seconds) }));
  } else if (s.model && s.phase !== 'training' && settingsChange(s.model.settings, s.settings) === 'model') {
    kind = 'warning';
    const done = lastStep(s);
    text.textContent = done ? t('lab.newModel.trained', { done }) : t('lab.newModel');
    actionsHtml = button('keep', t('lab.keep'));
  } else if (s.model && s.phase !== 'training' && settingsChange(s.model.settings, s.settings) === 'training') {
    text.textContent = t('lab.continue', { steps: s.settings.steps, lr: s.settings.lr, batch: s.settings.batch });
  } else text.textContent = s.message ?? phaseText(s);
  acts.innerHTML = actionsHtml;
  details.hidden = !detail;
  details.querySelector('pre')!.textContent = detail ?? '';
  banner.dataset.phase = s.phase;
  banner.dataset.kind = kind;
}
