// The chapters' state in the URL: chapter=<n>, and each experiment's quick flag and changed
// parameters as x.<experiment>.<parameter>=<value> (x.<experiment>.quick=0|1), so a link
// reproduces what the reader set up. Figure controls are f.<figure>.<control>=<value> (figures/url.ts).
import type { PanelState } from '../ui/experiment_panel';
import { CHAPTERS } from './chapters';

export function readChapter(url: URL): number {
  const n = Number(url.searchParams.get('chapter'));
  return CHAPTERS.some((c) => c.n === n) ? n : 1;
}

export function readPanel(url: URL, name: string): PanelState {
  const prefix = `x.${name}.`;
  const given: Record<string, string> = {};
  let quick = true;
  for (const [k, v] of url.searchParams) {
    if (!k.startsWith(prefix)) continue;
    const p = k.slice(prefix.length);
    if (p === 'quick') quick = v !== '0';
    else given[p] = v;
  }
  return { quick, given };
}

function edit(fn: (u: URL) => void) {
  const url = new URL(location.href);
  fn(url);
  history.replaceState(history.state, '', url);
}

export const writeChapter = (n: number) => edit((u) => u.searchParams.set('chapter', String(n)));

export function writePanel(name: string, s: PanelState) {
  edit((u) => {
    for (const k of [...u.searchParams.keys()]) if (k.startsWith(`x.${name}.`)) u.searchParams.delete(k);
    if (!s.quick) u.searchParams.set(`x.${name}.quick`, '0');
    for (const [k, v] of Object.entries(s.given)) u.searchParams.set(`x.${name}.${k}`, v);
  });
}

