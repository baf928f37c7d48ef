import { renderTokens } from '../components/tokens_view';
import { PAD_COUNT } from '../inputs';
import type { Step } from '../step';

export const tokensStep: Step = {
  id: 'tokens',
  title: 'Tokens',
  perHead: false,
  beats: (c) => c.input.tokens.length + 1,
  columns: () => 10,
  caption: (c) => (c.beat > 0 && c.beat <= c.input.tokens.length ? `token ${c.beat - 1}: “${c.input.tokens[c.beat - 1]}”` : ''),
  explain: (c) =>
    `<p>A model does not read letters. First the sentence is cut into <b>tokens</b> (here simply words and punctuation; Chinese, Japanese and Korean text, written without spaces, one character per token), and every token gets a <b>position</b>: 0, 1, 2, …</p>
     <p>Attention will let every token look at every other token <i>directly</i>, in one step, however far apart they are. The rest of this walkthrough shows exactly how, with the numbers the engine computed for your sentence.</p>` +
    (c.input.padded.some(Boolean)
      ? `<p>With the <b>padding</b> mask, ${PAD_COUNT} <span class="tag pad">⟨pad⟩</span> tokens are appended, as happens when short sentences are batched with longer ones. They must not influence anything.</p>`
      : ''),
  render(host, c) {
    renderTokens(host, { tokens: c.input.tokens, padded: c.input.padded, shown: c.beat === 0 ? c.input.tokens.length : c.beat });
  },
};
