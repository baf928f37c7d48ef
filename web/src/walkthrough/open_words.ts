// What "Open a model…" says, in the page's language: what was opened, and why a model could not be
// opened (one sentence a reader can act on; the engine's own message stays beside it as details).
import { t, type Key } from '../i18n';
import type { PretrainedInfo } from '../engine/protocol/pretrained';

/** "Opened model.safetensors: 12 layers, 12 heads, d_model 768, ..." with the engine's notes. */
export function openedSummary(info: PretrainedInfo, ignored: string[]): string {
  const tokenizer =
    info.tokenizer.source === 'bundled'
      ? t('walk.open.tokenizerBundled')
      : info.tokenizer.source === 'shipped'
        ? t('walk.open.tokenizerShipped', { kind: info.tokenizer.kind })
        : t('walk.open.tokenizerFiles', { kind: info.tokenizer.kind });
  const parts = [
    t('walk.open.opened', {
      name: info.name,
      layers: info.layers,
      heads: info.heads,
      d: info.dModel,
      vocab: info.vocab,
      positions: info.maxLen,
      params: (info.parameters / 1e6).toFixed(info.parameters < 1e7 ? 2 : 1),
      tokenizer,
    }),
  ];
  if (info.notes.length) parts.push(t('walk.open.notes', { notes: info.notes.join(' ') }));
  if (ignored.length) parts.push(t('walk.open.ignored', { names: ignored.join(', ') }));
  return parts.join(' ');
}

/** The sentence for each kind of refused file the engine names (an Error's `problem`, core/error.hpp FileProblem). */
const FILE_PROBLEM: Record<string, Key> = {
  too_short: 'walk.open.err.truncated',
  truncated: 'walk.open.err.truncated',
  header_too_long: 'walk.open.err.notSafetensors',
  bad_header: 'walk.open.err.badHeader',
  not_a_checkpoint: 'walk.open.err.badHeader',
  mismatch: 'walk.open.err.mismatch',
};

/**
 * Why the model could not be opened: a kind (for the page's data-error and the tests), the sentence
 * in the page's language, and the engine's message. A refused file carries the engine's name of its
 * problem; the other refusals are told apart by what the engine's message is about.
 */
export function openError(file: string, error: { message: string; problem?: string; picker?: boolean }, ignored: string[]): { kind: string; text: string; details: string } {
  const m = error.message;
  const [kind, key]: [string, Key] =
    error.problem && FILE_PROBLEM[error.problem]
      ? [error.problem, FILE_PROBLEM[error.problem]]
      : /this build can hold/.test(m)
        ? ['too_large', 'walk.open.err.tooLarge']
        : /config\.json/.test(m)
          ? ['config', 'walk.open.err.config']
          : /tokenizer|vocab\.(json|txt|bpe)|merges\.txt|encoder\.json/i.test(m)
            ? ['tokenizer', 'walk.open.err.tokenizer']
            : /missing|shape|unexpected/.test(m)
              ? ['tensors', 'walk.open.err.tensors']
              : ['files', 'walk.open.err.files'];
  const extra = ignored.length ? t('walk.open.ignored', { names: ignored.join(', ') }) : '';
  // The picker's own problems (no weights, an incomplete tokenizer) are already in the page's words.
  if (error.picker) return { kind: 'picker', text: m, details: extra };
  // The engine's refusal of a large model names its size and the limit ("... has 354823168 parameters, 1.32 GiB in float32, more than the 1.00 GiB ...").
  const size = kind === 'too_large' ? /has (\d+) parameters, ([\d.]+ \w+) in float32, more than the ([\d.]+ \w+)/.exec(m) : null;
  const why = size ? t('walk.open.err.tooLargeSize', { params: (Number(size[1]) / 1e6).toFixed(1), size: size[2], limit: size[3] }) : t(key);
  return { kind, text: t('walk.open.err.refused', { file: file || t('walk.open.theFiles'), why }), details: [m, extra].filter(Boolean).join(' ') };
}
