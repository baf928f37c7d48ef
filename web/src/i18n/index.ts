// The page's two languages. Every text the page writes comes from one string table per language
// (en.ts, zh.ts: the same keys, the zh table typed by the en one), read through t(key, params)
// with {name} interpolation. The language is kept in the URL as lang=en|zh; without it the page
// follows the browser (navigator.languages: zh* -> zh, anything else -> en). Switching changes
// <html lang> and tells every view to render its texts again; no state is rebuilt.
import { en, type Strings } from './en';
import { zh } from './zh';

export type Lang = 'en' | 'zh';
export type Key = keyof Strings;
export type Params = Record<string, string | number>;

export const LANGS: readonly Lang[] = ['en', 'zh'];
const TABLES: Record<Lang, Strings> = { en, zh };
/** The BCP 47 tag <html lang> carries for each language. */
const HTML_LANG: Record<Lang, string> = { en: 'en', zh: 'zh-CN' };

/** The language a URL asks for, else the first of the browser's languages' (zh* -> zh, else en). */
export function initialLang(url: URL, browser: readonly string[]): Lang {
  const asked = url.searchParams.get('lang');
  if (asked === 'en' || asked === 'zh') return asked;
  return browser.length && browser[0].toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

let current: Lang = typeof location === 'undefined' ? 'en' : initialLang(new URL(location.href), navigator.languages ?? [navigator.language]);
const listeners = new Set<(l: Lang) => void>();

export const lang = (): Lang => current;

/** The text of `key` in the current language, each {name} replaced by params[name]. */
export function t(key: Key, params?: Params): string {
  const text = TABLES[current][key];
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/** Runs `fn` after every language switch (views render their texts again). */
export function onLang(fn: (l: Lang) => void): void {
  listeners.add(fn);
}

/** Switches the page's language: <html lang>, the URL's lang key, every view's texts. */
export function setLang(l: Lang): void {
  const changed = l !== current;
  current = l;
  document.documentElement.lang = HTML_LANG[l];
  const url = new URL(location.href);
  url.searchParams.set('lang', l);
  history.replaceState(history.state, '', url);
  if (changed) for (const fn of listeners) fn(l);
}

/**
 * Fills the static texts of `root` and under it from their keys: data-i18n (text), data-i18n-html (markup
 * from the table), data-i18n-title, data-i18n-aria (aria-label), data-i18n-placeholder.
 */
export function translate(root: ParentNode): void {
  const each = (attr: string, apply: (e: HTMLElement, text: string) => void) =>
    [...(root instanceof HTMLElement && root.hasAttribute(attr) ? [root] : []), ...root.querySelectorAll<HTMLElement>(`[${attr}]`)].forEach((e) =>
      apply(e, t(e.getAttribute(attr) as Key)),
    );
  each('data-i18n', (e, s) => (e.textContent = s));
  each('data-i18n-html', (e, s) => (e.innerHTML = s));
  each('data-i18n-title', (e, s) => (e.title = s));
  each('data-i18n-aria', (e, s) => e.setAttribute('aria-label', s));
  each('data-i18n-placeholder', (e, s) => ((e as HTMLInputElement).placeholder = s));
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
/** Markup of a static text that follows the language: a span keyed for translate(). */
export const span = (key: Key, className = '') => `<span${className ? ` class="${className}"` : ''} data-i18n="${key}">${escapeAttr(t(key))}</span>`;
/** An attribute (title, aria-label or placeholder) that follows the language. */
export const attr = (name: 'title' | 'aria-label' | 'placeholder', key: Key) =>
  `${name}="${escapeAttr(t(key))}" data-i18n-${name === 'aria-label' ? 'aria' : name}="${key}"`;
