// "Open a model…": the reader's files sorted by name into a checkpoint's parts (compute layer: pure,
// no engine call). One .safetensors file holds the weights; config.json and the tokenizer's files
// are optional; any other file is named as not read.
import { t } from '../i18n';

/** A checkpoint's files by role, or the problems that stop them being opened (in words). */
export interface SortedFiles {
  weights: File | null;
  config: File | null;
  /** The tokenizer's files by name, or null when none was picked (GPT-2's own is then used). */
  tokenizer: Record<string, File> | null;
  /** Files that are not part of a checkpoint the page reads (README.md, tokenizer.json, ...). */
  ignored: string[];
  problems: string[];
}

/** The tokenizers the engine reads from files (text/tokenizer.hpp), each a set of names. */
const TOKENIZER_SETS: { needs: string[]; optional: string[] }[] = [
  { needs: ['vocab.json', 'merges.txt'], optional: [] },
  { needs: ['encoder.json', 'vocab.bpe'], optional: [] },
  { needs: ['vocab.txt'], optional: ['tokenizer_config.json'] },
];
const TOKENIZER_NAMES = new Set(TOKENIZER_SETS.flatMap((s) => [...s.needs, ...s.optional]));

/** The names the picker reads, for its hint and its accept list. */
export const MODEL_FILE_NAMES = ['model.safetensors', 'config.json', ...TOKENIZER_NAMES];

export function sortModelFiles(files: readonly File[]): SortedFiles {
  const out: SortedFiles = { weights: null, config: null, tokenizer: null, ignored: [], problems: [] };
  const weights = files.filter((f) => f.name.toLowerCase().endsWith('.safetensors'));
  const tokenizer: Record<string, File> = {};
  for (const f of files) {
    if (weights.includes(f)) continue;
    if (f.name === 'config.json') out.config = f;
    else if (TOKENIZER_NAMES.has(f.name)) tokenizer[f.name] = f;
    else out.ignored.push(f.name);
  }
  if (weights.length === 0) out.problems.push(t('walk.open.noWeights'));
  else if (weights.length > 1) out.problems.push(t('walk.open.twoWeights', { names: weights.map((f) => f.name).join(', ') }));
  else out.weights = weights[0];

  const names = Object.keys(tokenizer);
  if (names.length) {
    // Exactly one complete set: its required files all there, nothing of another set.
    const complete = TOKENIZER_SETS.filter((s) => s.needs.every((n) => n in tokenizer));
    const chosen = complete.length === 1 ? complete[0] : null;
    const extra = chosen ? names.filter((n) => !chosen.needs.includes(n) && !chosen.optional.includes(n)) : [];
    if (!chosen || extra.length) {
      const sets = TOKENIZER_SETS.map((s) => s.needs.join(' + ')).join(t('walk.open.or'));
      out.problems.push(t('walk.open.tokenizerSet', { names: names.join(', '), sets }));
    } else out.tokenizer = tokenizer;
  }
  return out;
}
