import { t } from '../../i18n';
import { note } from '../components/common';
import { renderKvCache } from '../components/kv_cache_view';
import { escapeHtml } from '../components/tokens_view';
import type { Step, StepContext } from '../step';
import { headLabel, kvHead, stage, tokens } from './helpers';

/** A lab-trained decoder's generation (its prompt, then its own tokens), else null: the trace's own rows. */
const generation = (c: StepContext) => c.trace.kvCache?.generation ?? null;
/** Tokens fed through the cache, one per step. */
const fed = (c: StepContext) => generation(c)?.labels ?? c.input.tokens;
/** Row labels: position and token, generated ones marked with →. */
const labels = (c: StepContext) => {
  const g = generation(c);
  return g ? g.labels.map((s, i) => `${i} ${i >= g.prompt ? '→ ' : ''}${s}`) : tokens(c);
};

export const kvCacheStep: Step = {
  id: 'kv-cache',
  title: () => t('walk.step.kvCache.title'),
  perHead: true,
  beats: (c) => fed(c).length + 1,
  columns: (c) => 2 * fed(c).length + c.derived.D + 4,
  caption: (c) => (c.beat > 0 ? t('walk.step.kvCache.caption', { t: c.beat - 1, token: fed(c)[c.beat - 1] }) : ''),
  explain: (c) => {
    const g = generation(c);
    if (!c.trace.model) return c.trace.kvCache ? t('walk.step.kvCache.explain') : t('walk.step.kvCache.none');
    if (!c.trace.kvCache) return t(c.trace.model.kind === 'decoder' ? 'walk.step.kvCache.trainedNone' : 'walk.step.kvCache.encoder');
    const m = c.trace.model;
    const trained = m.pretrained ? t('walk.step.kvCache.pretrained', { layer: m.layer, name: m.pretrained.name, continuation: escapeHtml(m.pretrained.continuation) }) : t('walk.step.kvCache.trained', { layer: m.layer });
    return `${t('walk.step.kvCache.explain')} ${trained}${g ? ` ${t('walk.step.kvCache.generated', { prompt: g.prompt, n: g.tokens.length - g.prompt })}` : ''}`;
  },
  render(host, c) {
    const kv = c.trace.kvCache;
    if (!kv) {
      const why = !c.trace.model ? 'walk.step.kvCache.none' : c.trace.model.kind === 'decoder' ? 'walk.step.kvCache.trainedNone' : 'walk.step.kvCache.encoder';
      note(host, 'no-kv', `<p>${t(why)}</p>`);
      return;
    }
    const g = generation(c);
    const T = fed(c).length;
    renderKvCache(host, {
      tokens: labels(c),
      k: g ? g.k[kvHead(c)] : stage(c, 'k', kvHead(c)),
      steps: kv.full,
      linear: kv.linear,
      t: c.beat > 0 ? c.beat - 1 : T - 1,
      head: c.head,
      headLabel: headLabel(c, true),
      cell: c.cell,
    });
  },
};
