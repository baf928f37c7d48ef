// §8: the article's checks of a hand-written layer, live on the engine's layer with the reader's
// settings: the tests' verdicts with their numbers, the layer against the plain JavaScript
// reference stage by stage and gradient by gradient, head 0's weights of both, and the code of
// both side by side (the engine's C++ and the reference, cut from their files at build time).
import excerpts from 'virtual:source-excerpts';
import { t, type Key } from '../../i18n';
import { sequentialScale } from '../../util/color';
import type { CheckFigure, Compared } from './check.compute';
import { cellFor, matrix, note, range } from './draw';
import { defineFigure } from './figure';

/** The article's names of the four weight matrices. */
const WEIGHT_NAMES: Record<string, string> = { 'q_proj.weight': 'W_Q', 'k_proj.weight': 'W_K', 'v_proj.weight': 'W_V', 'out_proj.weight': 'W_O' };
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const e2 = (v: number) => (v === 0 ? '0' : v.toExponential(2));
const verdict = (pass: boolean) => `<span class="verdict ${pass ? 'pass' : 'fail'}">${t(pass ? 'ch.fig.check.pass' : 'ch.fig.check.fail')}</span>`;

function testsTable(d: CheckFigure): HTMLTableElement {
  const output = d.stages.find((s) => s.name === 'output')!;
  const firstOff = [...d.stages, ...d.grads].find((s) => !s.pass);
  const rows: [string, Key, boolean | null, string][] = [
    ['shape', 'ch.fig.check.test.shape', d.shape.pass, t('ch.fig.check.shape', { input: d.shape.input.join(' × '), output: d.shape.output.join(' × ') })],
    ['mask', 'ch.fig.check.test.mask', d.mask ? d.mask.pass : null, d.mask
      ? t('ch.fig.check.mask', { self: d.mask.selfWeight.toFixed(3), future: d.mask.futureWeight.toFixed(3), head: d.mask.worst.head, row: d.mask.worst.row, col: d.mask.worst.col })
      : t('ch.fig.check.maskOff')],
    ['gradient', 'ch.fig.check.test.gradient', d.gradPass, d.gradients.map((g) => `‖∂L/∂${WEIGHT_NAMES[g.name] ?? g.name}‖ = ${g.norm.toFixed(3)}`).join(', ')],
    ['reference', 'ch.fig.check.test.reference', !firstOff, firstOff
      ? t('ch.fig.check.referenceFail', { name: firstOff.name, diff: e2(firstOff.maxDiff), tol: e2(firstOff.tol), out: e2(output.maxDiff) })
      : t('ch.fig.check.referencePass', { out: e2(output.maxDiff), n: d.stages.length + d.grads.length })],
  ];
  const tb = document.createElement('table');
  tb.className = 'fig-stats check-tests';
  tb.dataset.stats = 'check-tests';
  tb.innerHTML = `<caption>${t('ch.fig.check.tests')}</caption><tbody>${rows
    .map(([id, label, pass, text]) => `<tr data-test="${id}" data-pass="${pass === null ? 'skipped' : pass}"><th>${t(label)}</th><td>${pass === null ? `<span class="verdict skip">${t('ch.fig.check.skip')}</span>` : verdict(pass)}</td><td class="why">${esc(text)}</td></tr>`)
    .join('')}</tbody>`;
  return tb;
}

/** Which tests caught the layer, in words, from the verdicts. */
function summary(host: HTMLElement, d: CheckFigure) {
  const names: Key[] = ['ch.fig.check.test.shape', 'ch.fig.check.test.mask', 'ch.fig.check.test.gradient', 'ch.fig.check.test.reference'];
  const ref = [...d.stages, ...d.grads].every((s) => s.pass);
  const results = [d.shape.pass, d.mask ? d.mask.pass : null, d.gradPass, ref];
  const failed = names.filter((_, i) => results[i] === false).map((k) => t(k));
  const passed = names.filter((_, i) => results[i] === true).map((k) => t(k));
  const sep = t('ch.fig.check.sep');
  const text = failed.length ? t('ch.fig.check.caught', { failed: failed.join(sep), passed: passed.join(sep) || '—' }) : t('ch.fig.check.allPass');
  note(host, text, { caught: failed.length });
}

function diffTable(stats: string, caption: string, list: Compared[]): HTMLTableElement {
  const tb = document.createElement('table');
  tb.className = 'fig-stats';
  tb.dataset.stats = stats;
  tb.innerHTML = `<caption>${caption}</caption><thead><tr><th>${t('ch.fig.check.col.what')}</th><th>${t('ch.fig.check.col.diff')}</th><th>${t('ch.fig.check.col.tol')}</th><th></th></tr></thead><tbody>${list
    .map((s) => `<tr data-stage="${s.name}" data-pass="${s.pass}"><th>${esc(s.name)}</th><td data-max-diff="${s.maxDiff}">${t('ch.maxDiff', { v: e2(s.maxDiff) })}</td><td>${e2(s.tol)}</td><td>${verdict(s.pass)}</td></tr>`)
    .join('')}</tbody>`;
  return tb;
}

function codeColumn(lang: 'cpp' | 'js', title: Key): HTMLElement {
  const col = document.createElement('div');
  col.className = 'code-column';
  col.dataset.code = lang;
  col.innerHTML = `<h4>${t(title)}</h4>${excerpts
    .filter((e) => e.lang === lang)
    .map((e, i) => `<details${i === 0 ? ' open' : ''} data-excerpt="${e.id}" data-file="${e.file}" data-first="${e.first}" data-last="${e.last}"><summary><code>${esc(e.id)}</code> <span class="muted small">${e.file}:${e.first}–${e.last}</span></summary><pre><code>${esc(e.text)}</code></pre></details>`)
    .join('')}`;
  return col;
}

export const checkFigure = defineFigure({
  id: 'check',
  controls: [
    { name: 'T', label: 'ch.fig.check.T', values: [4, 6, 8], value: 6 },
    { name: 'C', label: 'ch.fig.check.C', values: [8, 16, 32], value: 8 },
    { name: 'H', label: 'ch.fig.check.H', values: [1, 2, 4], value: 2 },
    { name: 'causal', label: 'ch.fig.check.causal', values: ['on', 'off'], value: 'on', labels: { on: 'ch.fig.check.on', off: 'ch.fig.check.off' } },
    { name: 'breakage', label: 'ch.fig.check.breakage', values: ['none', 'reshape', 'mask'], value: 'none', labels: { none: 'ch.fig.check.break.none', reshape: 'ch.fig.check.break.reshape', mask: 'ch.fig.check.break.mask' } },
  ],
  request: (v) => ({ figure: 'check', T: Number(v('T')), C: Number(v('C')), H: Number(v('H')), causal: v('causal') === 'on', breakage: v('breakage') as CheckFigure['breakage'], seed: 12 }),
  draw(host, d) {
    host.dataset.breakage = d.breakage;
    note(host, t(`ch.fig.check.about.${d.breakage}` as Key, { H: d.H }), { about: d.breakage });
    if (d.nothingToFlip) note(host, t('ch.fig.check.nothingToFlip'), { nothingToFlip: 1 });
    if (d.breakage === 'reshape' && d.H === 1) note(host, t('ch.fig.check.oneHead'));
    const tests = document.createElement('div');
    tests.className = 'fig-cell fig-wide';
    tests.appendChild(testsTable(d));
    host.appendChild(tests);
    summary(host, d);
    const w = d.stages.find((s) => s.name === 'weights')!;
    const T = d.T;
    const head0 = (x: Compared['engine']) => ({ shape: [T, T], data: x.data.slice(0, T * T) });
    const scale = sequentialScale(1);
    const c = cellFor(host, 2 * T + 2, 34);
    const tok = range(T, (i) => `t${i}`);
    const pair = document.createElement('div');
    pair.className = 'fig-pair fig-wide';
    host.appendChild(pair);
    matrix(pair, 'check-engine', t('ch.fig.check.wEngine'), head0(w.engine), scale, { cell: c, rowLabels: tok, colLabels: tok });
    matrix(pair, 'check-plain', t('ch.fig.check.wPlain'), head0(w.plain), scale, { cell: c, rowLabels: tok, colLabels: tok });
    for (const [stats, caption, list] of [['check', t('ch.fig.check.stages'), d.stages], ['check-grads', t('ch.fig.check.grads'), d.grads]] as const) {
      const cell = document.createElement('div');
      cell.className = 'fig-cell';
      cell.appendChild(diffTable(stats, caption, list));
      host.appendChild(cell);
    }
    const code = document.createElement('div');
    code.className = 'code-pair';
    code.appendChild(codeColumn('cpp', 'ch.fig.check.codeCpp'));
    code.appendChild(codeColumn('js', 'ch.fig.check.codeJs'));
    host.appendChild(code);
  },
});
