// What an experiment's run returns, in the page's language. English: the engine's own texts (a
// message rendered with the templates lab.experiments()[i].messages lists, which gives exactly
// result.conclusion). Chinese: the templates and terms of results_zh.ts. Numbers and run names
// with numbers stay as the engine formatted them.
import type { ExperimentMessage } from '../engine/protocol/chapters';
import { lang } from './index';
import { CONCLUSIONS_ZH, KEEP, PATTERNS_ZH, TERMS_ZH, TERMS_ZH_BY_EXPERIMENT } from './results_zh';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Chinese list separators for the engine's "; ", ", " (a separator "" stays ""). */
const SEPARATOR_ZH: Record<string, string> = { '; ': '；', ', ': '、' };

/** The Chinese of one engine text (caption, column, cell, label, line name), or undefined. */
export function termZh(experiment: string, text: string): string | undefined {
  const own = TERMS_ZH_BY_EXPERIMENT[experiment]?.[text] ?? TERMS_ZH[text];
  if (own !== undefined) return own;
  for (const p of PATTERNS_ZH) {
    const m = p.en.exec(text);
    if (!m) continue;
    return p.zh.replace(/\$(\d)/g, (_, i: string) => {
      const part = m[Number(i)];
      return Number(i) === p.error ? part : (termZh(experiment, part) ?? part);
    });
  }
  return undefined;
}

/** Whether a text reads the same in Chinese: a number or percentage, or notation (KEEP). */
export const sameInZh = (text: string) => KEEP.has(text) || /^-?\d+(\.\d+)?(e[-+]\d+)?%?$/.test(text);

/** A table's or chart's text in the page language (as the engine gave it when there is no entry). */
export function term(experiment: string, text: string): string {
  return lang() === 'zh' ? (termZh(experiment, text) ?? text) : text;
}

/**
 * A message rendered with `templates` (id -> text with {name}); text values go through `value`
 * (the page translates run names and encodings), lists are joined with `separator(s)`.
 */
export function renderMessage(m: ExperimentMessage, templates: Record<string, string>, value: (s: string) => string, separator: (s: string) => string): string {
  const template = templates[m.id];
  if (template === undefined) throw new Error(`no template '${m.id}'`);
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = m.values[name];
    if (v === undefined) throw new Error(`template '${m.id}': no value '${name}'`);
    if (typeof v === 'string') return value(v);
    return v.parts.map((p) => renderMessage(p, templates, value, separator)).join(separator(v.separator));
  });
}

/**
 * The conclusion or timing message in the page language: the engine's English templates or
 * CONCLUSIONS_ZH (English when a Chinese template is missing, which the tests do not let pass).
 */
export function messageText(experiment: string, english: Record<string, string>, m: ExperimentMessage): string {
  const inEnglish = () => renderMessage(m, english, (s) => s, (s) => s);
  if (lang() !== 'zh') return inEnglish();
  try {
    return renderMessage(m, CONCLUSIONS_ZH[experiment] ?? {}, (s) => termZh(experiment, s) ?? s, (s) => SEPARATOR_ZH[s] ?? s);
  } catch {
    return inEnglish();
  }
}

/** A note as markup in the page language; an engine error inside a translated note is shown as code. */
export function noteHtml(experiment: string, note: string): string {
  if (lang() !== 'zh') return esc(note);
  const own = TERMS_ZH_BY_EXPERIMENT[experiment]?.[note] ?? TERMS_ZH[note];
  if (own !== undefined) return esc(own);
  for (const p of PATTERNS_ZH) {
    const m = p.en.exec(note);
    if (!m) continue;
    return esc(p.zh).replace(/\$(\d)/g, (_, i: string) => {
      const part = m[Number(i)];
      return Number(i) === p.error ? `<code lang="en">${esc(part)}</code>` : esc(termZh(experiment, part) ?? part);
    });
  }
  return `<span lang="en">${esc(note)}</span>`;
}
