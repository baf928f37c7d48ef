import { t } from '../../i18n';
import { renderTokens } from '../components/tokens_view';
import { PAD_COUNT } from '../inputs';
import type { Step } from '../step';

export const tokensStep: Step = {
  id: 'tokens',
  title: () => t('walk.step.tokens.title'),
  perHead: false,
  beats: (c) => c.input.tokens.length + 1,
  columns: () => 10,
  caption: (c) => (c.beat > 0 && c.beat <= c.input.tokens.length ? t('walk.step.tokens.caption', { i: c.beat - 1, token: c.input.tokens[c.beat - 1] }) : ''),
  explain: (c) =>
    (c.trace.model?.pretrained
      ? t('walk.step.tokens.pretrained', { n: c.input.tokens.length, ids: c.trace.model.tokens.join(', ') })
      : t('walk.step.tokens.explain')) +
    (c.input.padded.some(Boolean)
      ? t('walk.step.tokens.padding', { n: PAD_COUNT })
      : ''),
  render(host, c) {
    renderTokens(host, { tokens: c.input.tokens, padded: c.input.padded, shown: c.beat === 0 ? c.input.tokens.length : c.beat });
  },
};
