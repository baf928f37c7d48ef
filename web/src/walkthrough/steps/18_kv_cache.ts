import { t } from '../../i18n';
import { note } from '../components/common';
import { renderKvCache } from '../components/kv_cache_view';
import type { Step } from '../step';
import { headLabel, kvHead, stage, tokens } from './helpers';

export const kvCacheStep: Step = {
  id: 'kv-cache',
  title: () => t('step.kvCache.title'),
  perHead: true,
  beats: (c) => c.derived.T + 1,
  columns: (c) => 2 * c.derived.T + c.derived.D + 4,
  caption: (c) => (c.beat > 0 ? t('step.kvCache.caption', { t: c.beat - 1, token: c.input.tokens[c.beat - 1] }) : ''),
  explain: (c) =>
    c.trace.model
      ? c.trace.kvCache
        ? `${t('step.kvCache.explain')} ${t('step.kvCache.trained', { layer: c.trace.model.layer })}`
        : t('step.kvCache.encoder')
      : c.trace.kvCache
        ? t('step.kvCache.explain')
        : t('step.kvCache.none'),
  render(host, c) {
    const kv = c.trace.kvCache;
    if (!kv) {
      note(host, 'no-kv', `<p>${c.trace.model ? t('step.kvCache.encoder') : t('step.kvCache.none')}</p>`);
      return;
    }
    const T = c.derived.T;
    renderKvCache(host, {
      tokens: tokens(c),
      k: stage(c, 'k', kvHead(c)),
      steps: kv.full,
      linear: kv.linear,
      t: c.beat > 0 ? c.beat - 1 : T - 1,
      head: c.head,
      headLabel: headLabel(c, true),
      cell: c.cell,
    });
  },
};
