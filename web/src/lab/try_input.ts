// "Try the model": the reader's text checked against the task's format before the engine sees it,
// with errors in the task's words (symbols, keys, brackets, characters), never token ids. The
// task's tokens come from the engine (TaskInfo.words: task.decode of each id).
import { t } from '../i18n';
import type { LabSettings, TaskInfo } from '../engine/protocol';

export type TryInput = { text: string } | { error: string };

/** How to write an input for the task (shown under the field). */
export function tryHint(s: LabSettings): string {
  switch (s.task) {
    case 'brackets':
      return t('lab.hint.brackets', { n: s.length, set: '()[]{}<>'.slice(0, 2 * s.vocab) });
    case 'copy':
    case 'reverse':
    case 'sort':
      return t('lab.hint.symbols', { n: s.length, last: s.vocab - 1, example: exampleDigits(s) });
    case 'assoc_recall':
      return t(s.length > 1 ? 'lab.hint.recall' : 'lab.hint.recallOne', { n: s.length, example: exampleRecall(s), last: s.vocab - 1 });
    case 'char_lm':
      return t('lab.hint.charLm', { n: s.length });
  }
}

const exampleDigits = (s: LabSettings) => Array.from({ length: s.length }, (_, i) => (3 * i + 1) % s.vocab).join(' ');
function exampleRecall(s: LabSettings) {
  const pairs = Array.from({ length: s.length }, (_, i) => `k${(s.vocab - 1 - i + s.vocab) % s.vocab} v${(2 * i + 1) % s.vocab}`);
  return `${pairs.join(' ')} | k${s.vocab - 1}`;
}

const quote = (t: string) => (t === ' ' ? 'a space' : t === '\n' ? 'a line break' : `‘${t}’`);

/** The input in the task's own spelling (what the engine's task.encode reads), or what is wrong with it. */
export function checkTryInput(raw: string, s: LabSettings, info: TaskInfo): TryInput {
  const known = new Set(info.words);
  if (info.separated) {
    const words = raw.trim().split(/\s+/).filter(Boolean);
    if (!words.length) return { error: 'Type an input first (the format is under the field).' };
    const bad = words.find((w) => !known.has(w));
    if (s.task === 'assoc_recall') {
      if (bad) return { error: `${quote(bad)} is not a key or value of this task: keys are k0…k${s.vocab - 1}, values v0…v${s.vocab - 1}, and | separates the pairs from the question.` };
      return checkRecall(words, s);
    }
    if (bad) return { error: `${quote(bad)} is not a symbol of this task: use whole numbers 0…${s.vocab - 1} separated by spaces, then |.` };
    const symbols = words[words.length - 1] === '|' ? words.slice(0, -1) : words;
    if (symbols.includes('|')) return { error: 'Type the separator | once, at the end: the model writes the answer after it.' };
    if (symbols.length !== s.length)
      return { error: `${s.task} reads exactly ${s.length} symbols before the |; you typed ${symbols.length}.` };
    return { text: `${symbols.join(' ')} |` };
  }
  const chars = Array.from(s.task === 'brackets' ? raw.replace(/\s+/g, '') : raw);
  if (!chars.length) return { error: 'Type an input first (the format is under the field).' };
  const alphabet = s.task === 'brackets' ? info.words.filter((w) => w !== '.') : info.words;
  const bad = chars.find((c) => !alphabet.includes(c));
  if (bad)
    return {
      error:
        s.task === 'brackets'
          ? `${quote(bad)} is not one of this task's brackets (${alphabet.join(' ')}).`
          : `${quote(bad)} does not occur in the text the model learned from, so it has no token; use letters, spaces and ${alphabet.filter((c) => /[^A-Za-z \n]/.test(c)).join(' ')}.`,
    };
  if (chars.length > s.length)
    return { error: s.task === 'brackets' ? `This classifier reads at most ${s.length} brackets; you typed ${chars.length}.` : `The model reads a window of ${s.length} characters; type at most ${s.length} (you typed ${chars.length}).` };
  return { text: chars.join('') };
}

function checkRecall(words: string[], s: LabSettings): TryInput {
  const sep = words.indexOf('|');
  const format = `the format is ${s.length} key–value pair${s.length > 1 ? 's' : ''}, |, then one of the keys (e.g. ${exampleRecall(s)})`;
  if (sep < 0 || sep !== words.length - 2) return { error: `Put | before the last word, the key you ask about: ${format}.` };
  const pairs = words.slice(0, sep);
  if (pairs.length !== 2 * s.length) return { error: `This model reads exactly ${s.length} pair${s.length > 1 ? 's' : ''} (${2 * s.length} words) before the |; you typed ${pairs.length} words: ${format}.` };
  for (let i = 0; i < pairs.length; i += 2) {
    if (!pairs[i].startsWith('k') || !pairs[i + 1].startsWith('v')) return { error: `Pairs are a key then a value (k… v…); ${quote(pairs[i])} ${quote(pairs[i + 1])} is not: ${format}.` };
  }
  const keys = pairs.filter((_, i) => i % 2 === 0);
  if (new Set(keys).size !== keys.length) return { error: `Each pair needs its own key; a key appears twice: ${format}.` };
  const query = words[words.length - 1];
  if (!keys.includes(query)) return { error: `Ask about one of the pairs' keys (${keys.join(', ')}), not ${quote(query)}.` };
  return { text: words.join(' ') };
}
