import { t } from '../../i18n';
import { renderMask } from '../components/mask_view';
import { GLOBAL_TOKENS, WINDOW } from '../inputs';
import type { Step } from '../step';
import { stage, tokens, keyTokens } from './helpers';

export const maskStep: Step = {
  id: 'mask',
  title: () => t('walk.step.mask.title'),
  perHead: true,
  beats: (c) => c.derived.T + 1,
  columns: (c) => 2 * c.derived.S + 3,
  caption: (c) => (c.beat > 0 ? t('walk.step.mask.caption', { i: c.beat - 1, token: c.input.tokens[c.beat - 1] }) : ''),
  explain: (c) => {
    const m = c.settings.mask;
    const parts: string[] = [];
    if (m === 'none') parts.push(t('walk.step.mask.none'));
    if (m.includes('causal'))
      parts.push(t('walk.step.mask.causal'));
    if (m.includes('window')) {
      const T = c.derived.T;
      parts.push(
        t('walk.step.mask.window', { W: WINDOW, short: T <= WINDOW + 1 ? t('walk.step.mask.windowShort', { T }) : '' }),
      );
    }
    if (m.includes('global'))
      parts.push(
        t(GLOBAL_TOKENS === 1 ? 'walk.step.mask.globalOne' : 'walk.step.mask.global', { G: GLOBAL_TOKENS }),
      );
    if (m.includes('padding'))
      parts.push(t('walk.step.mask.padding'));
    parts.push(t('walk.step.mask.minusInf'));
    return parts.join('');
  },
  render(host, c) {
    renderMask(host, {
      tokens: tokens(c),
      keyTokens: keyTokens(c),
      scaled: stage(c, 'scaled', c.head),
      masked: stage(c, 'masked', c.head),
      cell: c.cell,
      rowsShown: c.beat === 0 ? c.derived.T : c.beat,
    });
  },
};
