// The chapters' state in the URL: chapter=<n>, and each experiment's quick flag and changed
// parameters as x.<experiment>.<parameter>=<value> (x.<experiment>.quick=0|1), so a link
// reproduces what the reader set up. Figure controls are f.<figure>.<control>=<value> (figures/url.ts).
// Each experiment and figure has an anchor (#exp-<name>, #fig-<id>): a link to one opens its
// chapter there; x.<experiment>.run=1 in a link starts that experiment's run once it is loaded.
import type { PanelState } from '../ui/experiment_panel';
import { CHAPTERS } from './chapters';

export const experimentAnchor = (name: string) => `exp-${name}`;
export const figureAnchor = (id: string) => `fig-${id}`;

/** The chapter whose experiment or figure the URL's anchor names, or null. */
function chapterOfAnchor(hash: string): number | null {
  const id = decodeURIComponent(hash.replace(/^#/, ''));
  const c = CHAPTERS.find((k) => k.experiments.some((e) => experimentAnchor(e) === id) || k.figures.some((f) => figureAnchor(f.id) === id));
  return c ? c.n : null;
}

/** The chapter a URL opens: the one its anchor is in, else chapter=<n>, else the first. */
export function readChapter(url: URL): number {
  const anchored = chapterOfAnchor(url.hash);
  if (anchored !== null) return anchored;
  const n = Number(url.searchParams.get('chapter'));
  return CHAPTERS.some((c) => c.n === n) ? n : 1;
}

/** The URL's keys that belong to the chapters (the other views keep theirs out of chapter links). */
export const isChapterKey = (k: string) => k === 'chapter' || k.startsWith('x.') || k.startsWith('f.');

/**
 * What a link asks of an experiment: 'start' (x.<name>.run=1), 'offer' (the anchor names it, or
 * the link sets its parameters), or 'none'.
 */
export function linkAsks(url: URL, name: string): 'start' | 'offer' | 'none' {
  if (url.searchParams.get(`x.${name}.run`) === '1') return 'start';
  if (url.hash === `#${experimentAnchor(name)}` || [...url.searchParams.keys()].some((k) => k.startsWith(`x.${name}.`))) return 'offer';
  return 'none';
}

/** Removes x.<name>.run from the address (a run the link started is not started again on reload). */
export const forgetRunFlag = (name: string) => edit((u) => u.searchParams.delete(`x.${name}.run`));

/** A link to one experiment with its settings (and, with `run`, starting it): chapter, language, its keys, its anchor. */
export function experimentLink(chapter: number, name: string, s: PanelState, run: boolean): string {
  const u = new URL(location.href);
  u.search = '';
  u.searchParams.set('chapter', String(chapter));
  const l = new URL(location.href).searchParams.get('lang');
  if (l) u.searchParams.set('lang', l);
  if (!s.quick) u.searchParams.set(`x.${name}.quick`, '0');
  for (const [k, v] of Object.entries(s.given)) u.searchParams.set(`x.${name}.${k}`, v);
  if (run) u.searchParams.set(`x.${name}.run`, '1');
  u.hash = experimentAnchor(name);
  return u.href;
}

/** A link to one figure as the reader set it: chapter, language, its controls, its anchor. */
export function figureLink(chapter: number, id: string): string {
  const here = new URL(location.href);
  const u = new URL(location.href);
  u.search = '';
  u.searchParams.set('chapter', String(chapter));
  const l = here.searchParams.get('lang');
  if (l) u.searchParams.set('lang', l);
  for (const [k, v] of here.searchParams) if (k.startsWith(`f.${id}.`)) u.searchParams.set(k, v);
  u.hash = figureAnchor(id);
  return u.href;
}

export function readPanel(url: URL, name: string): PanelState {
  const prefix = `x.${name}.`;
  const given: Record<string, string> = {};
  let quick = true;
  for (const [k, v] of url.searchParams) {
    if (!k.startsWith(prefix)) continue;
    const p = k.slice(prefix.length);
    if (p === 'quick') quick = v !== '0';
    else if (p !== 'run') given[p] = v;
  }
  return { quick, given };
}

function edit(fn: (u: URL) => void) {
  const url = new URL(location.href);
  fn(url);
  history.replaceState(history.state, '', url);
}

/** Sets chapter=<n>; an anchor into another chapter goes (it would open that chapter). */
export const writeChapter = (n: number) =>
  edit((u) => {
    u.searchParams.set('chapter', String(n));
    const anchored = chapterOfAnchor(u.hash);
    if (anchored !== null && anchored !== n) u.hash = '';
  });

export function writePanel(name: string, s: PanelState) {
  edit((u) => {
    for (const k of [...u.searchParams.keys()]) if (k.startsWith(`x.${name}.`) && k !== `x.${name}.run`) u.searchParams.delete(k);
    if (!s.quick) u.searchParams.set(`x.${name}.quick`, '0');
    for (const [k, v] of Object.entries(s.given)) u.searchParams.set(`x.${name}.${k}`, v);
  });
}

