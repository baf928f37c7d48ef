import { renderMask } from '../components/mask_view';
import { GLOBAL_TOKENS, WINDOW } from '../inputs';
import type { Step } from '../step';
import { stage, tokens } from './helpers';

export const maskStep: Step = {
  id: 'mask',
  title: 'Mask',
  perHead: true,
  beats: (c) => c.derived.T + 1,
  columns: (c) => 2 * c.derived.S + 3,
  caption: (c) => (c.beat > 0 ? `row ${c.beat - 1}: which keys may “${c.input.tokens[c.beat - 1]}” see?` : ''),
  explain: (c) => {
    const m = c.settings.mask;
    const parts: string[] = [];
    if (m === 'none') parts.push('<p><b>No mask</b> is used: every token may look at every token, including later ones. That is right for reading a whole sentence (an encoder), and wrong for writing one word at a time.</p>');
    if (m.includes('causal'))
      parts.push('<p>The <b>causal mask</b> hides the future: token i may only look at tokens 0…i. Otherwise, when a model learns to predict the next word, it could simply peek at it: training loss would fall suspiciously fast and generation would fail.</p>');
    if (m.includes('window')) {
      const T = c.derived.T;
      parts.push(
        `<p>The <b>sliding window</b> (W = ${WINDOW}, Longformer-style local attention) hides keys more than W positions back: token i sees only tokens i−${WINDOW}…i, its ${WINDOW} nearest past tokens and itself. Each row keeps at most W + 1 scores, so the cost grows as O(T·W) instead of O(T²): long texts stay affordable, and stacked layers still pass information further, W positions per layer.${T <= WINDOW + 1 ? ` <i>With only ${T} tokens the window hides nothing yet: try a longer sentence.</i>` : ''}</p>`,
      );
    }
    if (m.includes('global'))
      parts.push(
        `<p>The first ${GLOBAL_TOKENS === 1 ? 'token is' : `${GLOBAL_TOKENS} tokens are`} <b>global</b>: exempt from the window, ${GLOBAL_TOKENS === 1 ? 'it is' : 'they are'} seen by every later token, so information can cross the whole sequence in two hops.</p>`,
      );
    if (m.includes('padding'))
      parts.push('<p>The <b>padding mask</b> hides the ⟨pad⟩ keys: they are filler, and must not take attention away from real tokens.</p>');
    parts.push('<p>A hidden pair gets the score <b>−∞</b> (hatched). After the next step, e<sup>−∞</sup> = 0: it receives exactly zero weight. (Masks combine by a logical OR.)</p>');
    return parts.join('');
  },
  render(host, c) {
    renderMask(host, {
      tokens: tokens(c),
      keyTokens: tokens(c),
      scaled: stage(c, 'scaled', c.head),
      masked: stage(c, 'masked', c.head),
      cell: c.cell,
      rowsShown: c.beat === 0 ? c.derived.T : c.beat,
    });
  },
};
