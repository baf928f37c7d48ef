// Lab settings <-> URL query string (so a link reproduces a run), and the task's token layouts.
import type { LabSettings, TaskName } from '../engine/protocol';
import { mulberry32 } from '../util/rng';

export const TASKS: { id: TaskName; label: string; what: string }[] = [
  { id: 'reverse', label: 'reverse', what: 'read a1…aL, a separator, then write them backwards' },
  { id: 'copy', label: 'copy', what: 'read a1…aL, a separator, then write them again' },
  { id: 'sort', label: 'sort', what: 'read a1…aL, a separator, then write them in ascending order' },
  { id: 'assoc_recall', label: 'associative recall', what: 'read key–value pairs, then a key: answer its value' },
  { id: 'brackets', label: 'brackets (classifier)', what: 'is a string of brackets balanced? (an encoder reads it all)' },
  { id: 'char_lm', label: 'char-LM', what: 'predict the next character of a small embedded text' },
];

export const DEFAULT_LAB: LabSettings = {
  task: 'reverse',
  length: 6,
  vocab: 8,
  layers: 2,
  dModel: 32,
  heads: 4,
  kvHeads: 4,
  positional: 'rope',
  norm: 'pre',
  scale: true,
  lr: 3e-3,
  batch: 32,
  steps: 600,
  seed: 1,
};

const NUM_KEYS: (keyof LabSettings)[] = ['length', 'vocab', 'layers', 'dModel', 'heads', 'kvHeads', 'lr', 'batch', 'steps', 'seed'];

export function settingsFromUrl(url: URL): LabSettings {
  const s: LabSettings = { ...DEFAULT_LAB };
  const q = url.searchParams;
  const task = q.get('task');
  if (task && TASKS.some((t) => t.id === task)) s.task = task as TaskName;
  for (const k of NUM_KEYS) {
    const v = q.get(k);
    if (v != null && v !== '' && Number.isFinite(Number(v))) (s as unknown as Record<string, number>)[k] = Number(v);
  }
  const pos = q.get('positional');
  if (pos === 'none' || pos === 'sinusoidal' || pos === 'learned' || pos === 'rope') s.positional = pos;
  const norm = q.get('norm');
  if (norm === 'pre' || norm === 'post') s.norm = norm;
  if (q.has('scale')) s.scale = q.get('scale') !== '0';
  return s;
}

export function settingsToUrl(s: LabSettings, url: URL): URL {
  const out = new URL(url);
  out.searchParams.set('task', s.task);
  for (const k of NUM_KEYS) out.searchParams.set(k, String(s[k]));
  out.searchParams.set('positional', s.positional);
  out.searchParams.set('norm', s.norm);
  out.searchParams.set('scale', s.scale ? '1' : '0');
  return out;
}

export function labProblems(s: LabSettings): string[] {
  const p: string[] = [];
  if (s.dModel % s.heads) p.push(`d_model ${s.dModel} is not divisible by ${s.heads} heads.`);
  if (s.heads % s.kvHeads) p.push(`${s.heads} heads cannot share ${s.kvHeads} K/V heads evenly.`);
  if (s.positional === 'rope' && (s.dModel / s.heads) % 2) p.push('RoPE needs an even head width.');
  if (!(s.lr > 0 && s.lr < 1)) p.push('learning rate must be in (0, 1).');
  if (s.steps < 1 || s.steps > 100000) p.push('steps must be in 1..100000.');
  return p;
}

/** Display text of a token of the prompt/answer tasks: symbols as letters/digits, SEP as '|'. */
export function tokenText(s: LabSettings, t: number): string {
  const sym = (k: number) => (k < 10 ? String(k) : String.fromCharCode(55 + k));
  switch (s.task) {
    case 'copy':
    case 'reverse':
    case 'sort':
      return t === s.vocab ? '|' : sym(t);
    case 'assoc_recall':
      return t === 2 * s.vocab ? '|' : t < s.vocab ? String.fromCharCode(97 + (t % 26)) : sym(t - s.vocab);
    case 'brackets': {
      const pairs = ['()', '[]', '{}', '<>'];
      if (t === 2 * s.vocab) return '·';
      return pairs[Math.floor(t / 2) % 4][t % 2];
    }
    case 'char_lm':
      return `#${t}`;
  }
}

/** A fixed example input for the attention maps (seeded), in the task's layout from tasks.hpp. */
export function sampleTokens(s: LabSettings): number[] {
  const r = mulberry32(s.seed * 7919 + 17);
  const L = s.length;
  const syms = Array.from({ length: L }, () => Math.floor(r() * s.vocab));
  switch (s.task) {
    case 'copy':
      return [...syms, s.vocab, ...syms].slice(0, 2 * L);
    case 'reverse':
      return [...syms, s.vocab, ...[...syms].reverse()].slice(0, 2 * L);
    case 'sort':
      return [...syms, s.vocab, ...[...syms].sort((a, b) => a - b)].slice(0, 2 * L);
    case 'assoc_recall': {
      const keys = [...Array(s.vocab).keys()].sort(() => r() - 0.5).slice(0, L);
      const vals = keys.map(() => s.vocab + Math.floor(r() * s.vocab));
      const q = Math.floor(r() * keys.length);
      return [...keys.flatMap((k, i) => [k, vals[i]]), 2 * s.vocab, keys[q]];
    }
    case 'brackets': {
      const out: number[] = [];
      const stack: number[] = [];
      while (out.length < L) {
        if (stack.length && (r() < 0.5 || out.length + stack.length >= L)) out.push(2 * (stack.pop() as number) + 1);
        else {
          const k = Math.floor(r() * s.vocab);
          stack.push(k);
          out.push(2 * k);
        }
      }
      return out;
    }
    case 'char_lm':
      return [];
  }
}

/** Parses the reader's prompt ("3 1 4 1") into tokens for decoder tasks; null if invalid. */
export function parsePrompt(s: LabSettings, text: string): number[] | null {
  const parts = text.trim().split(/[\s,]+/).filter(Boolean);
  if (s.task === 'brackets') {
    const pairs = ['()', '[]', '{}', '<>'];
    const out: number[] = [];
    for (const ch of text.replace(/\s+/g, '')) {
      const k = pairs.findIndex((p) => p.includes(ch));
      if (k < 0 || k >= s.vocab) return null;
      out.push(2 * k + pairs[k].indexOf(ch));
    }
    return out.length ? out.slice(0, s.length) : null;
  }
  if (s.task === 'copy' || s.task === 'reverse' || s.task === 'sort') {
    const syms = parts.map((p) => parseInt(p, 36));
    if (syms.length !== s.length || syms.some((v) => !(v >= 0 && v < s.vocab))) return null;
    return [...syms, s.vocab];
  }
  return null;
}
