// Compare runs (render layer): the finished runs the lab kept (lab/state.ts FinishedRun), the
// settings that differ between the ones selected (highlighted), and their loss, accuracy and
// gradient-norm curves overlaid on shared axes. Computes nothing the engine reported differently:
// every curve point is a StepMetrics value.
import type { LabSettings } from '../engine/protocol/lab';
import { t as tr } from '../i18n';
import { HEAD_COLORS } from '../util/color';
import { linkCharts, renderSeries, type CurveSeries } from './charts';
import type { FinishedRun, LabState } from './state';

const runColor = (id: number) => HEAD_COLORS[(id - 1) % HEAD_COLORS.length];
const show = (v: unknown) => (typeof v === 'boolean' ? (v ? tr('lab.compare.on') : tr('lab.compare.off')) : String(v));
const escape = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The settings whose values are not the same in every one of `runs`, in the settings' order. */
export function differingSettings(runs: FinishedRun[]): (keyof LabSettings)[] {
  if (runs.length < 2) return [];
  const keys = Object.keys(runs[0].settings) as (keyof LabSettings)[];
  return keys.filter((k) => runs.some((r) => r.settings[k] !== runs[0].settings[k]));
}

const last = (r: FinishedRun) => r.metrics[r.metrics.length - 1];

/**
 * The run "Train again with ..." starts from: the first of the runs compared (the latest run when
 * none is ticked), so every variant differs from that one baseline in the one setting flipped.
 */
export function baselineRun(s: Pick<LabState, 'runs' | 'compare'>): FinishedRun | null {
  const ticked = s.runs.filter((r) => s.compare.includes(r.id));
  return ticked[0] ?? s.runs[s.runs.length - 1] ?? null;
}

/**
 * A setting's name as the lab's form shows it (its label without the control), so the comparison
 * says "learning rate", not lr; the key itself where the form has no such field.
 */
export function settingLabel(key: string): string {
  const label = document.querySelector(`form.lab-settings [name="${key}"]`)?.closest('label');
  if (!label) return key;
  const copy = label.cloneNode(true) as HTMLElement;
  copy.querySelectorAll('input, select, textarea').forEach((e) => e.remove());
  return copy.textContent?.replace(/\s+/g, ' ').trim() || key;
}

export function mountCompare(host: HTMLElement) {
  host.innerHTML = `
    <h3 data-i18n="lab.compare.title">${tr('lab.compare.title')}</h3>
    <p class="muted small compare-hint"></p>
    <div class="compare-variants">
      <button type="button" data-act="variant-scale"></button>
      <button type="button" data-act="variant-norm"></button>
      <button type="button" data-act="runs-clear" data-i18n="lab.compare.clear">${tr('lab.compare.clear')}</button>
    </div>
    <ul class="run-list"></ul>
    <div class="run-table"></div>
    <div class="compare-curves"></div>`;
  linkCharts(host.querySelector<HTMLElement>('.compare-curves')!);
}

export function renderCompare(host: HTMLElement, s: LabState) {
  const selected = s.runs.filter((r) => s.compare.includes(r.id));
  const diff = differingSettings(selected);
  host.dataset.runs = String(s.runs.length);
  host.querySelector<HTMLElement>('.compare-hint')!.textContent = s.runs.length ? tr('lab.compare.hint') : tr('lab.compare.none');
  const base = baselineRun(s);
  const from = base?.settings ?? s.settings;
  const scaleBtn = host.querySelector<HTMLButtonElement>('button[data-act="variant-scale"]')!;
  const id = { id: base?.id ?? 0 };
  scaleBtn.textContent = base ? tr(from.scale ? 'lab.compare.unscaledFrom' : 'lab.compare.scaledFrom', id) : tr(from.scale ? 'lab.compare.unscaled' : 'lab.compare.scaled');
  const normBtn = host.querySelector<HTMLButtonElement>('button[data-act="variant-norm"]')!;
  const norm = from.norm === 'pre' ? 'Post-LN' : 'Pre-LN';
  normBtn.textContent = base ? tr('lab.compare.normFrom', { norm, ...id }) : tr('lab.compare.norm', { norm });
  host.querySelectorAll<HTMLButtonElement>('.compare-variants button[data-act^="variant-"]').forEach((b) => (b.dataset.baseline = String(base?.id ?? '')));
  const busy = s.phase === 'training' || s.phase === 'unavailable';
  scaleBtn.disabled = normBtn.disabled = busy || from.architecture === 'lstm';
  host.querySelector<HTMLButtonElement>('button[data-act="runs-clear"]')!.disabled = !s.runs.length;

  const list = host.querySelector<HTMLElement>('.run-list')!;
  list.innerHTML = s.runs
    .map((r) => {
      const m = last(r);
      const on = s.compare.includes(r.id);
      const differs = on && diff.length ? ` · ${diff.map((k) => `<span class="differs">${escape(settingLabel(k))} ${escape(show(r.settings[k]))}</span>`).join(' ')}` : '';
      return `<li data-run="${r.id}"><label><input type="checkbox" data-compare="${r.id}"${on ? ' checked' : ''} /> <i class="swatch" style="background:${runColor(r.id)}"></i> ${escape(tr('lab.compare.run', { id: r.id, task: r.settings.task, steps: m.step, loss: m.loss.toFixed(4), acc: Number.isFinite(m.accuracy) ? m.accuracy.toFixed(3) : '—' }))}${differs}</label></li>`;
    })
    .join('');

  const table = host.querySelector<HTMLElement>('.run-table')!;
  if (selected.length < 2) {
    table.innerHTML = s.runs.length ? `<p class="muted small">${tr('lab.compare.pick')}</p>` : '';
  } else {
    const keys = Object.keys(selected[0].settings) as (keyof LabSettings)[];
    table.innerHTML = `<table class="run-settings"><thead><tr><th></th>${selected.map((r) => `<th><i class="swatch" style="background:${runColor(r.id)}"></i> ${r.id}</th>`).join('')}</tr></thead><tbody>${keys
      .map((k) => `<tr data-setting="${k}"${diff.includes(k) ? ' class="differs"' : ''}><th>${escape(settingLabel(k))}</th>${selected.map((r) => `<td>${escape(show(r.settings[k]))}</td>`).join('')}</tr>`)
      .join('')}</tbody></table>`;
  }

  const curves = host.querySelector<HTMLElement>('.compare-curves')!;
  if (selected.length < 2) {
    curves.replaceChildren();
    return;
  }
  const total = Math.max(...selected.map((r) => last(r).step));
  const label = (r: FinishedRun) => `${r.id}${diff.length ? ` (${diff.map((k) => `${settingLabel(k)} ${show(r.settings[k])}`).join(', ')})` : ''}`;
  const series = (pick: (m: FinishedRun['metrics'][number]) => number): CurveSeries[] =>
    selected.map((r, i) => ({ label: label(r), color: runColor(r.id), dashed: i > 0 && i % 2 === 1, points: r.metrics.map((m) => ({ step: m.step, value: pick(m) })) }));
  renderSeries(curves, 'compare-loss', tr('lab.loss'), series((m) => m.loss), total, { log: true });
  renderSeries(curves, 'compare-accuracy', tr('lab.accuracy'), series((m) => m.accuracy), total, { max: 1 });
  renderSeries(curves, 'compare-grad-norm', tr('lab.curve.gradNorm'), series((m) => m.gradNorm), total, { log: true });
}
