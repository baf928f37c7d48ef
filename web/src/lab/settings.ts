// Lab settings <-> URL query string (so a link reproduces a run). Token layouts live in the engine
// (task.encode / task.decode, see engine/training_engine.ts).
import type { LabSettings, TaskName } from '../engine/protocol';

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
