// The induction experiment drawn while it trains: on one step axis, the held-out loss on the first
// half and on the repeated half of random repeated sequences (top) and the best head's induction
// score (bottom), one colour per model, from the values of the engine's progress points. The
// phase change is a band over both plots: while training, where the engine's detector finds it in
// the curves so far (progress values phase_start, phase_end); once the run returns, the window of
// the result's phase_change table. Render layer: every number drawn is the engine's.
import * as d3 from 'd3';
import { t } from '../i18n';
import { ResultText } from '../i18n/results';
import type { ExperimentInfo, ExperimentProgress, ExperimentResult } from '../engine/protocol/chapters';
import { lineStyle, swatchHtml } from '../ui/line_chart';
import type { LiveView } from '../ui/experiment_panel';

/** One model's curves as its progress points gave them. */
interface RunCurves {
  run: string;
  index: number;
  total: number;
  steps: number[];
  first: number[];
  repeated: number[];
  score: number[];
  /** The phase change's window: live from the progress values, then the result's. */
  phase: { start: number; end: number; final: boolean } | null;
}

const PLOTS = [
  { key: 'loss', height: 190 },
  { key: 'score', height: 150 },
] as const;

export class InductionLive implements LiveView {
  readonly el: HTMLElement;
  private runs = new Map<string, RunCurves>();
  private result: ExperimentResult | null = null;
  private info: ExperimentInfo | null = null;

  constructor() {
    this.el = document.createElement('div');
    this.el.className = 'induction-live';
    this.el.dataset.live = 'induction';
  }

  setInfo(info: ExperimentInfo | null) {
    this.info = info;
  }

  reset() {
    this.runs.clear();
    this.result = null;
    this.render();
  }

  progress(points: ExperimentProgress[]) {
    for (const p of points) {
      const v = p.values;
      if (!v) continue;
      let c = this.runs.get(p.run);
      if (!c) this.runs.set(p.run, (c = { run: p.run, index: p.runIndex, total: p.total, steps: [], first: [], repeated: [], score: [], phase: null }));
      c.steps.push(p.step);
      c.first.push(v.first_half_loss);
      c.repeated.push(v.repeated_half_loss);
      c.score.push(v.induction_score);
      c.phase = v.phase_start !== undefined && v.phase_end !== undefined ? { start: v.phase_start, end: v.phase_end, final: false } : null;
    }
  }

  /** The run returned: each model's window is now the one of the result's phase_change table. */
  finish(r: ExperimentResult) {
    this.result = r;
    const table = r.tables.find((tb) => tb.name === 'phase_change');
    if (!table) return;
    const col = (name: string) => table.columns.indexOf(name);
    for (const row of table.rows) {
      const c = this.runs.get(row[0]);
      if (!c) continue;
      c.phase = row[col('phase change')] === 'yes' ? { start: Number(row[col('start step')]), end: Number(row[col('end step')]), final: true } : null;
    }
  }

  /** The run's name in the page language (the engine made it from a template: result.phrases). */
  private runName(run: string): string {
    if (!this.info || !this.result) return run.replace(/^(\d+)-layer$/, (_, n) => t('ch.ind.run', { n }));
    return new ResultText(this.info.name, this.info.messages, this.result).term(run);
  }

  render() {
    if (!this.runs.size) {
      this.el.innerHTML = '';
      return;
    }
    const runs = [...this.runs.values()].sort((a, b) => a.index - b.index);
    this.el.innerHTML = `<p class="small muted ind-what">${t('ch.ind.what')}</p><div class="ind-plots"></div><p class="small ind-phase" role="status"></p>`;
    const host = this.el.querySelector<HTMLElement>('.ind-plots')!;
    const room = host.clientWidth || this.el.parentElement?.clientWidth || 520;
    const width = Math.min(640, Math.max(260, room));
    const total = Math.max(1, ...runs.map((c) => c.total));
    const m = { top: 8, right: 16, bottom: 30, left: 52 };
    // One step axis for both plots: the same scale, the same margins.
    const x = d3.scaleLinear().domain([0, total]).range([m.left, width - m.right]);
    for (const plot of PLOTS) this.drawPlot(host, plot.key, plot.height, width, m, x, runs);
    this.el.querySelector<HTMLElement>('.ind-phase')!.textContent = runs
      .map((c) => {
        const name = this.runName(c.run);
        if (c.phase) return t(c.phase.final ? 'ch.ind.phase' : 'ch.ind.phaseSoFar', { run: name, start: c.phase.start, end: c.phase.end });
        return this.result ? t('ch.ind.noPhase', { run: name }) : '';
      })
      .filter(Boolean)
      .join(' ');
  }

  private drawPlot(host: HTMLElement, key: 'loss' | 'score', height: number, width: number, m: { top: number; right: number; bottom: number; left: number }, x: d3.ScaleLinear<number, number>, runs: RunCurves[]) {
    const lines = runs.flatMap((c) =>
      key === 'loss'
        ? [
            { run: c, part: 'first', y: c.first, label: t('ch.ind.first', { run: this.runName(c.run) }) },
            { run: c, part: 'repeated', y: c.repeated, label: t('ch.ind.repeated', { run: this.runName(c.run) }) },
          ]
        : [{ run: c, part: 'score', y: c.score, label: t('ch.ind.scoreOf', { run: this.runName(c.run) }) }],
    );
    const values = lines.flatMap((l) => l.y).filter((v) => Number.isFinite(v));
    const top = key === 'score' ? 1 : Math.max(1, ...values);
    const y = d3.scaleLinear().domain([0, top]).nice().range([height - m.bottom, m.top]);
    const fig = d3.select(host).append('figure').attr('class', 'chart').attr('data-chart', `induction-${key}`);
    fig.append('figcaption').attr('class', 'matrix-title').text(t(key === 'loss' ? 'ch.ind.lossTitle' : 'ch.ind.scoreTitle'));
    // Drawn for the width there was; a narrower window later (a phone turned) scales it down.
    const svg = fig.append('svg').attr('role', 'img').attr('width', width).attr('height', height)
      .attr('viewBox', `0 0 ${width} ${height}`).style('max-width', '100%').style('height', 'auto').attr('aria-label', t(key === 'loss' ? 'ch.ind.lossTitle' : 'ch.ind.scoreTitle'));
    // The phase change of each model: a band over its window, in the model's colour.
    for (const c of runs) {
      if (!c.phase) continue;
      const color = lineStyle(c.index * 2 + 1).color;
      svg
        .append('rect')
        .attr('class', 'phase')
        .attr('data-run', c.run)
        .attr('data-start', c.phase.start)
        .attr('data-end', c.phase.end)
        .attr('data-final', c.phase.final ? '1' : '0')
        .attr('x', x(c.phase.start))
        .attr('width', Math.max(2, x(c.phase.end) - x(c.phase.start)))
        .attr('y', m.top)
        .attr('height', height - m.top - m.bottom)
        .attr('fill', color)
        .attr('opacity', 0.16);
    }
    svg.append('g').attr('transform', `translate(0,${height - m.bottom})`).call(d3.axisBottom(x).ticks(6));
    svg.append('g').attr('transform', `translate(${m.left},0)`).call(d3.axisLeft(y).ticks(4));
    svg.append('text').attr('x', width / 2).attr('y', height - 2).attr('text-anchor', 'middle').attr('font-size', 11).text(t('ch.exp.step'));
    svg
      .append('text')
      .attr('transform', `translate(12,${(m.top + height - m.bottom) / 2}) rotate(-90)`)
      .attr('text-anchor', 'middle')
      .attr('font-size', 11)
      .text(t(key === 'loss' ? 'ch.ind.lossAxis' : 'ch.ind.scoreAxis'));
    const path = d3
      .line<[number, number]>()
      .defined((d) => Number.isFinite(d[1]))
      .x((d) => x(d[0]))
      .y((d) => y(d[1]));
    const keys = fig.append('div').attr('class', 'hist-keys');
    for (const l of lines) {
      const style = key === 'loss' ? lineStyle(l.run.index * 2 + (l.part === 'repeated' ? 1 : 0)) : lineStyle(l.run.index * 2 + 1);
      const dash = l.part === 'first' ? '5 3' : style.dash;
      svg
        .append('path')
        .attr('fill', 'none')
        .attr('stroke-width', 1.8)
        .attr('stroke', style.color)
        .attr('stroke-dasharray', dash)
        .attr('data-line', `${l.run.run}:${l.part}`)
        .attr('data-x', JSON.stringify(l.run.steps))
        .attr('data-y', JSON.stringify(l.y))
        .attr('d', path(l.y.map((v, i) => [l.run.steps[i], v])));
      keys.append('span').attr('class', 'key').attr('data-key', `${l.run.run}:${l.part}`).html(swatchHtml(style.color, dash)).append('span').text(l.label);
    }
  }
}
