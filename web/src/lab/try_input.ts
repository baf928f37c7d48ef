// "Try the model": the reader's text checked against the task's format before the engine sees it,
// with errors in the task's words (symbols, keys, brackets, characters), never token ids. The
// task's tokens come from the engine (TaskInfo.words: task.decode of each id).
import { taskLabel } from './settings';
import { t } from '../i18n';
import type { LabSettings, TaskInfo } from '../engine/protocol/lab';

export type TryInput = { text: string } | { error: string };

/** How to write an input for the task (shown under the field). */
export function tryHint(s: LabSettings): string {
  switch (s.task) {
    case 'brackets':
      return t('lab.try.hint.brackets', { n: s.length, set: '()[]{}<>'.slice(0, 2 * s.vocab) });
    case 'copy':
    case 'reverse':
    case 'sort':
      return t('lab.try.hint.symbols', { n: s.length, last: s.vocab - 1, example: exampleDigits(s) });
    case 'assoc_recall':
      return t(s.length > 1 ? 'lab.try.hint.recall' : 'lab.try.hint.recallOne', { n: s.length, example: exampleRecall(s), last: s.vocab - 1 });
    case 'char_lm':
      return t('lab.try.hint.charLm', { n: s.length });
    case 'text':
      return t('lab.try.hint.text', { n: s.length });
    case 'series':
    case 'shapes':
      return t('lab.picture.noTry');
  }
}

const exampleDigits = (s: LabSettings) => Array.from({ length: s.length }, (_, i) => (3 * i + 1) % s.vocab).join(' ');
function exampleRecall(s: LabSettings) {
  const pairs = Array.from({ length: s.length }, (_, i) => `k${(s.vocab - 1 - i + s.vocab) % s.vocab} v${(2 * i + 1) % s.vocab}`);
  return `${pairs.join(' ')} | k${s.vocab - 1}`;
}

const quote = (c: string) => (c === ' ' ? t('lab.try.space') : c === '\n' ? t('lab.try.lineBreak') : `‘${c}’`);

/** The input in the task's own spelling (what the engine's task.encode reads), or what is wrong with it. */
export function checkTryInput(raw: string, s: LabSettings, info: TaskInfo): TryInput {
  // A text model reads any text with its tokenizer (an unknown character reads as <unk>).
  if (s.task === 'text') return raw.trim() ? { text: raw } : { error: t('lab.try.empty') };
  const known = new Set(info.words);
  if (info.separated) {
    const words = raw.trim().split(/\s+/).filter(Boolean);
    if (!words.length) return { error: t('lab.try.empty') };
    const bad = words.find((w) => !known.has(w));
    if (s.task === 'assoc_recall') {
      if (bad) return { error: t('lab.try.notKeyValue', { bad: quote(bad), last: s.vocab - 1 }) };
      return checkRecall(words, s);
    }
    if (bad) return { error: t('lab.try.notSymbol', { bad: quote(bad), last: s.vocab - 1 }) };
    const symbols = words[words.length - 1] === '|' ? words.slice(0, -1) : words;
    if (symbols.includes('|')) return { error: t('lab.try.separatorOnce') };
    if (symbols.length !== s.length)
      return { error: t('lab.try.symbolCount', { task: taskLabel(s.task), n: s.length, typed: symbols.length }) };
    return { text: `${symbols.join(' ')} |` };
  }
  const chars = Array.from(s.task === 'brackets' ? raw.replace(/\s+/g, '') : raw);
  if (!chars.length) return { error: t('lab.try.empty') };
  const alphabet = s.task === 'brackets' ? info.words.filter((w) => w !== '.') : info.words;
  const bad = chars.find((c) => !alphabet.includes(c));
  if (bad)
    return {
      error:
        s.task === 'brackets'
          ? t('lab.try.notBracket', { bad: quote(bad), set: alphabet.join(' ') })
          : t('lab.try.notInText', { bad: quote(bad), others: alphabet.filter((c) => /[^A-Za-z \n]/.test(c)).join(' ') }),
    };
  if (chars.length > s.length)
    return { error: t(s.task === 'brackets' ? 'lab.try.tooManyBrackets' : 'lab.try.tooManyChars', { n: s.length, typed: chars.length }) };
  return { text: chars.join('') };
}

function checkRecall(words: string[], s: LabSettings): TryInput {
  const sep = words.indexOf('|');
  const format = t(s.length > 1 ? 'lab.try.recallFormat' : 'lab.try.recallFormatOne', { n: s.length, example: exampleRecall(s) });
  if (sep < 0 || sep !== words.length - 2) return { error: t('lab.try.recallSeparator', { format }) };
  const pairs = words.slice(0, sep);
  if (pairs.length !== 2 * s.length) return { error: t(s.length > 1 ? 'lab.try.recallCount' : 'lab.try.recallCountOne', { n: s.length, words: 2 * s.length, typed: pairs.length, format }) };
  for (let i = 0; i < pairs.length; i += 2) {
    if (!pairs[i].startsWith('k') || !pairs[i + 1].startsWith('v')) return { error: t('lab.try.recallPair', { pair: `${quote(pairs[i])} ${quote(pairs[i + 1])}`, format }) };
  }
  const keys = pairs.filter((_, i) => i % 2 === 0);
  if (new Set(keys).size !== keys.length) return { error: t('lab.try.recallTwice', { format }) };
  const query = words[words.length - 1];
  if (!keys.includes(query)) return { error: t('lab.try.recallQuery', { keys: keys.join(', '), query: quote(query) }) };
  return { text: words.join(' ') };
}
