// "Switch a head off" (render layer): the heads switched off, the ablation method the engine
// offers, and what the model does on the text with and without them: the loss, the KL divergence,
// the top next tokens with their probabilities and a greedy continuation (Model.ablate, the
// worker's engine: protocol/heads.ts).
import type { HeadsOutcome, HeadsPrediction } from '../engine/protocol/heads';
import { t, type Key } from '../i18n';
import { escapeHtml } from '../walkthrough/components/tokens_view';
import { parseHeadKey, type HeadsState } from './state';

export const ablationHtml = () => `
  <div class="abl-controls">
    <label class="field">${escapeHtml(t('heads.method'))} <select name="method"></select></label>
    <button type="button" data-act="all-on">${escapeHtml(t('heads.allOn'))}</button>
  </div>
  <p class="abl-off"></p>
  <p class="abl-status" role="status"></p>
  <div class="abl-out"></div>`;

const tokenLabel = (s: string) => escapeHtml(s.replace(/^ /, '␣').replace(/\n/g, '⏎'));

const topList = (top: HeadsPrediction[], side: string) =>
  `<ol class="top" data-side="${side}">${top
    .map((p) => `<li data-id="${p.id}" data-p="${p.p}"><span class="tok">${tokenLabel(p.label)}</span> <span class="bar" style="--p:${p.p}"></span> <b>${(100 * p.p).toFixed(1)}%</b></li>`)
    .join('')}</ol>`;

const column = (o: HeadsOutcome, side: 'clean' | 'ablated', title: Key, text: string) => `
  <div class="abl-col" data-side="${side}">
    <h4>${escapeHtml(t(title))}</h4>
    <p class="loss">${escapeHtml(t('heads.loss'))} <b data-value="${o.loss}">${o.loss.toFixed(4)}</b> <span class="muted">${escapeHtml(t('heads.nats'))}</span></p>
    <p class="muted small">${escapeHtml(t('heads.top', { k: o.top.length }))}</p>
    ${topList(o.top, side)}
    <p class="muted small">${escapeHtml(t('heads.continuation', { n: o.continuation.length }))}</p>
    <p class="continuation" data-side="${side}" data-ids="${o.continuation.join(',')}"><span class="muted">${escapeHtml(text)}</span><b>${escapeHtml(o.continuationText)}</b></p>
  </div>`;

/** Shows the store's ablation state in `host` (its controls keep their elements). */
export function renderAblation(host: HTMLElement, s: HeadsState, text: string) {
  const select = host.querySelector<HTMLSelectElement>('select[name="method"]')!;
  const methods = s.gallery?.methods ?? [];
  const optionsKey = methods.join(',') + '|' + t('heads.method');
  if (select.dataset.key !== optionsKey) {
    select.innerHTML = methods.map((m) => `<option value="${m}">${escapeHtml(t(`heads.method.${m}` as Key))}</option>`).join('');
    select.dataset.key = optionsKey;
  }
  select.value = s.method;
  host.querySelector<HTMLButtonElement>('[data-act="all-on"]')!.disabled = !s.off.length;
  const offText = s.off.length ? t('heads.offList', { heads: s.off.map((k) => t('heads.head', { layer: parseHeadKey(k)[0], head: parseHeadKey(k)[1] })).join(', ') }) : t('heads.noneOff');
  host.querySelector('.abl-off')!.textContent = offText;
  const status = host.querySelector<HTMLElement>('.abl-status')!;
  status.dataset.status = s.ablationStatus;
  status.textContent = s.ablationStatus === 'computing' ? t('heads.computing') : s.ablationStatus === 'error' ? (s.ablationError ?? '') : '';
  const out = host.querySelector<HTMLElement>('.abl-out')!;
  const a = s.ablation;
  if (!a) {
    out.innerHTML = '';
    return;
  }
  out.dataset.heads = a.heads.map(([l, h]) => `${l}.${h}`).join(',');
  out.dataset.method = a.method;
  const delta = a.ablated ? a.ablated.loss - a.clean.loss : 0;
  out.innerHTML = `
    ${a.ablated ? `<p class="abl-delta">${escapeHtml(t('heads.delta', { d: (delta >= 0 ? '+' : '−') + Math.abs(delta).toFixed(4) }))} · ${escapeHtml(t('heads.kl', { last: a.ablated.klLast.toFixed(4), mean: a.ablated.klMean.toFixed(4) }))}</p>` : `<p class="muted small">${escapeHtml(t('heads.pickOne'))}</p>`}
    <div class="abl-cols">
      ${column(a.clean, 'clean', 'heads.clean', text)}
      ${a.ablated ? column(a.ablated, 'ablated', 'heads.ablated', text) : ''}
    </div>`;
}
