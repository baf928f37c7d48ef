// What an experiment's run returns, in the page's language. English: the engine's own texts (a
// message rendered with the templates lab.experiments()[i].messages lists gives exactly the text
// the result carries). Chinese (results_zh.ts): a message by its template id, with the values the
// engine formatted; a text of a table, a chart or a note that the engine made from a template
// (result.phrases: a run name, a column with a number, a note) the same way; a fixed word by
// TERMS_ZH. Numbers stay as the engine formatted them, and an engine error inside a note (a value
// named `error`) stays in English, shown as code.
import type { ExperimentMessage, ExperimentResult } from '../engine/protocol/chapters';
import { lang } from './index';
import { COMMON_ZH, CONCLUSIONS_ZH, KEEP, TERMS_ZH } from './results_zh';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Chinese list separators for the engine's "; ", ", " (a separator "" stays ""). */
const SEPARATOR_ZH: Record<string, string> = { '; ': '；', ', ': '、' };

/**
 * A message rendered with `templates` (id -> text with {name}); each text value goes through
 * `value(name, text)`, lists are joined with `separator(s)`, and the template's own text through
 * `literal` (markup escapes it).
 */
export function renderMessage(m: ExperimentMessage, templates: Record<string, string>, value: (name: string, text: string) => string, separator: (s: string) => string, literal: (s: string) => string = (s) => s): string {
  const template = templates[m.id];
  if (template === undefined) throw new Error(`no template '${m.id}'`);
  let out = '';
  let at = 0;
  for (const ph of template.matchAll(/\{(\w+)\}/g)) {
    out += literal(template.slice(at, ph.index));
    at = ph.index! + ph[0].length;
    const v = m.values[ph[1]];
    if (v === undefined) throw new Error(`template '${m.id}': no value '${ph[1]}'`);
    out += typeof v === 'string' ? value(ph[1], v) : v.parts.map((p) => renderMessage(p, templates, value, separator, literal)).join(separator(v.separator));
  }
  return out + literal(template.slice(at));
}

/**
 * English titles of the tables and charts the experiments return, by the engine's table or series
 * name (an identifier, kept in data-table). A name not listed reads as words: "per_seed" -> "Per seed".
 */
const TABLE_TITLES: Record<string, string> = {
  final: 'Final results',
  init: 'At initialisation',
  train_loss: 'Training loss by step',
  recall: 'Recall accuracy by distance',
  cost: 'Cost by head count',
  model: 'The trained model',
  importance: 'Key rankings',
  permutation: 'Permutation gaps',
  variants: 'Pairs, memory and accuracy by length',
  timed: 'One layer timed',
  log_log: 'Growth with n (log-log slopes)',
  pairs: 'Query-key pairs per head',
  attention_memory: 'Attention memory per head',
  accuracy: 'Accuracy',
  max_score: 'Largest score by step',
  softmax_gradient: 'Softmax gradient by d_k',
  flops: 'Work by head count',
  'tang heads': 'Every head of tang',
  'brown heads': 'Every head of brown',
  counts: 'Heads of each kind',
  'samples: evidence': 'Evidence: the strongest rows of each labelled head',
  phase_change: 'Phase change',
  repeated_half_loss: 'Loss on the repeated half',
  first_half_loss: 'Loss on the first half',
  induction_score: 'Best induction score',
};

/** A table name as a title: the listed one, else its words with a capital. */
export function tableTitle(name: string): string {
  const words = TABLE_TITLES[name] ?? name.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Whether a text reads the same in Chinese: a number or percentage, or notation (KEEP). */
export const sameInZh = (text: string) => KEEP.has(text) || /^-?\d+(\.\d+)?(e[-+]\d+)?%?$/.test(text);

/** The texts of one experiment's result in the page's language. */
export class ResultText {
  private readonly phrases: Map<string, ExperimentMessage>;
  private readonly zh: Record<string, string>;

  constructor(experiment: string, private readonly english: Record<string, string>, result: Pick<ExperimentResult, 'phrases'>) {
    this.phrases = new Map(result.phrases.map((p) => [p.text, p.message]));
    this.zh = { ...COMMON_ZH, ...(CONCLUSIONS_ZH[experiment] ?? {}) };
  }

  /** The Chinese of one engine text (caption, column, cell, label, line name, value), or undefined. */
  termZh(text: string): string | undefined {
    const m = this.phrases.get(text);
    if (m) return renderMessage(m, this.zh, (name, v) => (name === 'error' ? v : (this.termZh(v) ?? v)), (s) => SEPARATOR_ZH[s] ?? s);
    return TERMS_ZH[text];
  }

  /** A table's or chart's text in the page language (as the engine gave it when there is no entry). */
  term(text: string): string {
    return lang() === 'zh' ? (this.termZh(text) ?? text) : text;
  }

  /** A table's caption in the page language: the Chinese term, else tableTitle (a phrase stays as made). */
  tableTitle(name: string): string {
    if (lang() === 'zh') return this.termZh(name) ?? tableTitle(name);
    return this.phrases.has(name) ? name : tableTitle(name);
  }

  /**
   * The conclusion or timing message in the page language: the engine's English templates or the
   * Chinese ones (English when a Chinese template is missing, which the tests do not let pass).
   */
  message(m: ExperimentMessage): string {
    const inEnglish = () => renderMessage(m, this.english, (_, s) => s, (s) => s);
    if (lang() !== 'zh') return inEnglish();
    try {
      return renderMessage(m, this.zh, (_, s) => this.termZh(s) ?? s, (s) => SEPARATOR_ZH[s] ?? s);
    } catch {
      return inEnglish();
    }
  }

  /** A note as markup in the page language; an engine error inside a translated note is shown as code. */
  noteHtml(note: string): string {
    if (lang() !== 'zh') return esc(note);
    const m = this.phrases.get(note);
    if (m) {
      try {
        return renderMessage(m, this.zh, (name, v) => (name === 'error' ? `<code lang="en">${esc(v)}</code>` : esc(this.termZh(v) ?? v)), (s) => esc(SEPARATOR_ZH[s] ?? s), esc);
      } catch {
        return `<span lang="en">${esc(note)}</span>`;
      }
    }
    const own = TERMS_ZH[note];
    return own !== undefined ? esc(own) : `<span lang="en">${esc(note)}</span>`;
  }
}
