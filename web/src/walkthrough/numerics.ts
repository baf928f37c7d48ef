// The engine's numerics of the current trace in one line: the largest |scaled score| against the
// number format's largest finite value, and the ±∞, NaN and flushed counts over every stage
// (Trace.numerics). Shown when the format is not fp32 or the input is scaled up.
import type { StageNumerics } from '../../attnlab';
import { t } from '../i18n';
import { FORMAT_MAX } from './inputs';
import type { WalkState } from './state';

export function renderNumerics(host: HTMLElement, s: WalkState) {
  const n = s.trace?.numerics;
  const precision = s.trace?.request.precision ?? 'fp32';
  host.hidden = !n || (precision === 'fp32' && (s.traced?.inputScale ?? 1) === 1);
  if (!n || host.hidden) return;
  const all = Object.values(n).filter((x): x is NonNullable<typeof x> => x != null);
  const sum = (k: keyof StageNumerics) => all.reduce((a, x) => a + x[k], 0);
  // -inf in the masked stage is the mask's; the ones elsewhere are overflow.
  const negInf = sum('negInf') - countMaskedCells(s);
  const maxScore = n.scaled?.maxAbs ?? 0;
  const limit = FORMAT_MAX[precision];
  const over = sum('posInf') + negInf + sum('nan');
  host.innerHTML = t('walk.numerics', { precision, max: maxScore.toPrecision(4), limit: limit.toPrecision(5), share: ((maxScore / limit) * 100).toPrecision(3) }) +
    ` · <span class="${over ? 'over' : ''}">${t('walk.numerics.counts', { posInf: sum('posInf'), negInf, nan: sum('nan'), flushed: sum('flushed') })}</span>` +
    `<span class="marks-key"> · <i class="key-over"></i>${t('walk.numerics.keyOver')} <i class="key-flushed"></i>${t('walk.numerics.keyFlushed')}</span>`;
}

/** Cells the mask hides (their -inf is by design), over all heads. */
function countMaskedCells(s: WalkState): number {
  const m = s.trace?.stages.masked;
  const sc = s.trace?.stages.scaled;
  if (!m || !sc) return 0;
  let n = 0;
  m.heads.forEach((x, h) => x.data.forEach((v, k) => (n += v === -Infinity && sc.heads[h].data[k] !== -Infinity ? 1 : 0)));
  return n;
}
