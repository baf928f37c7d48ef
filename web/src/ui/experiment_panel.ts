// One experiment of the article, driven only by its metadata (lab.experiments()): its parameters
// as controls with their defaults and --quick sizes, Run / Stop, progress with an ETA, the live
// loss curves, and the result the engine returns (tables, series, notes, conclusion, command),
// exportable as CSV, SVG and PNG. The run itself happens in a Web Worker (ExperimentRunner).
import { lang, t } from '../i18n';
import { EXPERIMENTS_ZH, PARAMETERS_ZH } from '../i18n/experiments_zh';
import { PARAMETER_LABELS } from '../i18n/parameters';
import { ResultText } from '../i18n/results';
import type { ExperimentInfo, ExperimentOptions, ExperimentParameter, ExperimentProgress, ExperimentResult } from '../engine/protocol/chapters';
import { exportButtons, saveCsv } from './export';
import { logAxes, renderLineChart, type Line } from './line_chart';

export interface ExperimentRunner {
  run(name: string, options: ExperimentOptions, onProgress: (points: ExperimentProgress[]) => void): Promise<ExperimentResult>;
  /** Ends the run in progress: its promise rejects with a RunStopped. */
  stop(): void;
}

/**
 * An experiment's own live drawing, in place of the live loss chart: it reads the progress points
 * (their values: what the experiment measures as it trains) and, once the run returns, its result.
 */
export interface LiveView {
  readonly el: HTMLElement;
  setInfo(info: ExperimentInfo | null): void;
  /** A run starts: what was drawn goes. */
  reset(): void;
  progress(points: ExperimentProgress[]): void;
  finish(result: ExperimentResult): void;
  /** Draws what it holds, in the page language. */
  render(): void;
}

/** How a run ended by stop() rejects. */
export class RunStopped extends Error {}

type Value = ExperimentParameter['default'];

/** A value as the control shows it: lists comma-separated. */
const show = (v: Value) => (Array.isArray(v) ? v.join(',') : String(v));

/** What the run sends: quick, plus each parameter whose control differs from the base values. */
export function optionsFor(info: ExperimentInfo, quick: boolean, given: Record<string, string>): ExperimentOptions {
  const o: ExperimentOptions = { quick };
  for (const p of info.parameters) {
    const text = given[p.name];
    if (text === undefined) continue;
    if (p.kind === 'integer' || p.kind === 'number') o[p.name] = Number(text);
    else o[p.name] = text;
  }
  return o;
}

/** The base value of a parameter: its --quick size when quick is on and it has one, else its default. */
export const baseValue = (info: ExperimentInfo, p: ExperimentParameter, quick: boolean): Value => (quick && p.name in info.quick ? info.quick[p.name] : p.default);

/** Resolves in a task of its own: a long drawing split into steps lets the page answer between them. */
const nextTask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export interface PanelState {
  quick: boolean;
  /** Parameters the reader changed, as control text. */
  given: Record<string, string>;
}

export class ExperimentPanel {
  readonly el: HTMLElement;
  private info: ExperimentInfo | null = null;
  private result: ExperimentResult | null = null;
  private live = new Map<string, Line>();
  private running = false;
  private started = 0;
  /** Seconds the finished run took. */
  private elapsed = 0;
  private liveTimer = 0;
  /** What the link that opened the page asks of this experiment (chapters/url.ts linkAsks). */
  private asked: 'start' | 'offer' | 'none' = 'none';
  /** The links shown after "Link" is pressed: [plain, starting the run]. */
  private links: [string, string] | null = null;
  /** The experiment's own live drawing, when it has one (it stays after the run). */
  private liveView: LiveView | null = null;
  /** Counts the runs started, so a finished run's drawing stops when another one starts. */
  private runs = 0;

  constructor(
    readonly name: string,
    private state: PanelState,
    private readonly runner: () => ExperimentRunner,
    private readonly onState: (s: PanelState) => void,
    /** A link to this experiment with these settings (run: the link starts it). */
    private readonly linkFor: (s: PanelState, run: boolean) => string = () => location.href,
    /** Called when a run the link asked for has started. */
    private readonly onLinkRun: () => void = () => {},
  ) {
    this.el = document.createElement('section');
    this.el.className = 'experiment';
    this.el.dataset.experiment = name;
    // '' until the engine's list is read, then '1' (listed) or '0' (not in this build).
    this.el.dataset.available = '';
    this.el.addEventListener('click', (ev) => this.click(ev));
    this.el.addEventListener('change', (ev) => this.change(ev));
    this.render();
  }

  /** The result object the runner returned for the last finished run (tests compare the page with it). */
  get lastResult(): ExperimentResult | null {
    return this.result;
  }

  /** Draws the runs' progress with `view` instead of the live loss chart. */
  setLiveView(view: LiveView) {
    this.liveView = view;
    view.setInfo(this.info);
    this.render();
  }

  /** The engine's metadata (null: the build does not have this experiment). */
  setInfo(info: ExperimentInfo | null | undefined) {
    this.info = info ?? null;
    this.liveView?.setInfo(this.info);
    this.el.dataset.available = info ? '1' : info === null ? '0' : '';
    this.render();
    if (info && this.asked === 'start') {
      this.asked = 'none';
      this.onLinkRun();
      void this.run();
    }
  }

  /** A link opened the page on this experiment: offer its run, or start it once the engine lists it. */
  askedByLink(mode: 'start' | 'offer' | 'none') {
    this.asked = mode;
    this.el.dataset.link = mode;
    if (mode === 'start' && this.info) this.setInfo(this.info);
    else this.render();
  }

  private click(ev: Event) {
    const b = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-act]');
    if (!b) return;
    const act = b.dataset.act;
    if (act === 'run') void this.run();
    else if (act === 'full') {
      // The quick run did not test the claim: the same settings at the full sizes.
      this.state = { quick: false, given: this.state.given };
      this.onState(this.state);
      void this.run();
    }
    else if (act === 'stop') this.runner().stop();
    else if (act === 'link') {
      this.links = [this.linkFor(this.state, false), this.linkFor(this.state, true)];
      this.render();
      void navigator.clipboard?.writeText(this.links[0]).catch(() => {});
      this.el.querySelector<HTMLInputElement>('.exp-share input')?.select();
    } else if (act === 'reset') {
      this.state = { quick: this.state.quick, given: {} };
      this.onState(this.state);
      this.render();
    } else if (act === 'copy') {
      void navigator.clipboard?.writeText(this.result?.command ?? '').then(() => (b.textContent = t('ch.exp.copied')), () => {});
    } else if (act === 'csv' && this.result) saveCsv(resultCsv(this.result), `attnlab-${this.name}`);
  }

  private change(ev: Event) {
    const e = ev.target as HTMLInputElement | HTMLSelectElement;
    if (!this.info) return;
    if (e.dataset.quick !== undefined) {
      this.state = { quick: (e as HTMLInputElement).checked, given: this.state.given };
    } else if (e.dataset.param) {
      const p = this.info.parameters.find((q) => q.name === e.dataset.param)!;
      const given = { ...this.state.given };
      if (e.value === show(baseValue(this.info, p, this.state.quick))) delete given[p.name];
      else given[p.name] = e.value;
      this.state = { quick: this.state.quick, given };
    } else return;
    this.onState(this.state);
    this.links = null;
    this.el.querySelector('.exp-share')?.remove();
    this.updateControls();
  }

  /**
   * Shows the state in the controls already drawn, in place: the control the reader is on keeps
   * its focus (and a Tab that caused the change moves on from it), and the other controls show
   * their new base values when --quick was switched.
   */
  private updateControls() {
    const host = this.el.querySelector<HTMLElement>('.exp-controls');
    if (!host || !this.info) return;
    for (const p of this.info.parameters) {
      const el = host.querySelector<HTMLInputElement | HTMLSelectElement>(`[data-param="${p.name}"]`);
      if (!el) return this.renderControls();
      const value = this.state.given[p.name] ?? show(baseValue(this.info, p, this.state.quick));
      if (el.value !== value) el.value = value;
      el.closest('label')?.classList.toggle('changed', p.name in this.state.given);
    }
  }

  private async run() {
    if (!this.info || this.running) return;
    this.running = true;
    this.runs++;
    this.asked = 'none';
    this.result = null;
    this.live.clear();
    this.liveView?.reset();
    this.el.querySelector('.exp-live')?.replaceChildren();
    this.started = performance.now();
    this.el.dataset.phase = 'running';
    this.render();
    const status = this.el.querySelector<HTMLElement>('.exp-status')!;
    try {
      const r = await this.runner().run(this.name, optionsFor(this.info, this.state.quick, this.state.given), (points) => this.progress(points));
      this.result = r;
      this.liveView?.finish(r);
      this.elapsed = (performance.now() - this.started) / 1000;
      // The result's own curves replace the live ones (and a run of a step or two has no curve).
      if (r.series.length || [...this.live.values()].every((l) => l.x.length < 3)) this.live.clear();
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      this.el.dataset.phase = e instanceof RunStopped ? 'stopped' : 'error';
      status.textContent = this.el.dataset.phase === 'stopped' ? t('ch.exp.stopped') : t('ch.exp.failed', { message: msg });
    } finally {
      this.running = false;
      clearTimeout(this.liveTimer);
      this.liveTimer = 0;
    }
    // The result is drawn a piece a task (panel and tables, the live view, each chart), so the
    // page keeps answering while it appears; the phase says 'done' once all of it is there.
    const run = ++this.runs;
    for (const step of this.renderSteps()) {
      step();
      await nextTask();
      if (run !== this.runs) return; // Run pressed again meanwhile: that run draws the panel now
    }
    if (this.result) this.el.dataset.phase = 'done';
  }

  private progress(points: ExperimentProgress[]) {
    this.liveView?.progress(points);
    for (const p of points) {
      let l = this.live.get(p.run);
      if (!l) this.live.set(p.run, (l = { name: p.run, x: [], y: [] }));
      l.x.push(p.step);
      l.y.push(Number.isFinite(p.loss) ? p.loss : null);
    }
    const p = points[points.length - 1];
    const done = (p.runIndex + p.step / Math.max(1, p.total)) / Math.max(1, p.numRuns);
    const elapsed = (performance.now() - this.started) / 1000;
    const eta = done > 0.02 ? Math.max(0, (elapsed * (1 - done)) / done) : NaN;
    const status = this.el.querySelector<HTMLElement>('.exp-status');
    if (status) {
      status.textContent = `${t('ch.exp.progress', { run: p.run, i: p.runIndex + 1, n: p.numRuns, step: p.step, total: p.total, loss: Number.isFinite(p.loss) ? p.loss.toFixed(3) : 'NaN' })}${Number.isFinite(eta) ? ` · ${t('ch.exp.eta', { s: Math.ceil(eta) })}` : ''}`;
    }
    const bar = this.el.querySelector<HTMLProgressElement>('progress');
    if (bar) bar.value = done;
    // One redraw per frame at most, whatever the batch rate.
    if (!this.liveTimer) {
      this.liveTimer = window.setTimeout(() => {
        this.liveTimer = 0;
        this.drawLive();
      }, 50);
    }
  }

  private drawLive() {
    const host = this.el.querySelector<HTMLElement>('.exp-live');
    if (host && this.liveView) {
      if (this.liveView.el.parentElement !== host) host.replaceChildren(this.liveView.el);
      this.liveView.render();
      return;
    }
    if (!host || !this.live.size) return;
    renderLineChart(host, { name: `${this.name}-live`, title: t('ch.exp.live'), xLabel: t('ch.exp.step'), yLabel: t('ch.exp.loss'), lines: [...this.live.values()], height: 180 });
  }

  private renderControls() {
    const host = this.el.querySelector<HTMLElement>('.exp-controls');
    if (!host || !this.info) return;
    const info = this.info;
    const disabled = this.running ? 'disabled' : '';
    const zh = lang() === 'zh';
    const field = (p: ExperimentParameter) => {
      const value = this.state.given[p.name] ?? show(baseValue(info, p, this.state.quick));
      const changed = p.name in this.state.given ? ' changed' : '';
      const flag = p.flag.replace(/^--/, '');
      const label = PARAMETER_LABELS[flag];
      const range = p.min !== undefined ? ` [${p.min}, ${p.max}]` : '';
      const engineHelp = label?.help && p.help.trim().toLowerCase() === flag ? label.help.en : p.help;
      const help = `${zh ? (label?.help?.zh ?? PARAMETERS_ZH[flag] ?? engineHelp) : engineHelp}${range}`;
      let control: string;
      // The page reads only the files it serves: a text parameter with suggested values (a shipped
      // model) offers those alone.
      const options = p.kind === 'text' ? (p.choices?.length ? p.choices : p.suggestions) : undefined;
      if (options?.length) {
        control = `<select data-param="${p.name}" ${disabled}>${options.map((c) => `<option${c === value ? ' selected' : ''}>${esc(c)}</option>`).join('')}</select>`;
      } else if (p.kind === 'integer' || p.kind === 'number') {
        control = `<input type="number" data-param="${p.name}" value="${esc(value)}" ${p.min !== undefined ? `min="${p.min}"` : ''} ${p.max !== undefined ? `max="${p.max}"` : ''} step="${p.kind === 'integer' ? 1 : 'any'}" ${disabled}>`;
      } else {
        control = `<input type="text" data-param="${p.name}" value="${esc(value)}" ${disabled}>`;
      }
      // The label in words, the flag small beside it, and the help visible under the control
      // (a touch screen has no hover).
      const words = label ? (zh ? label.zh : label.en) : flag;
      return `<label class="field${changed}"><span class="param-label">${esc(words)} <code class="flag">${esc(p.flag)}</code></span>${control}<span class="param-help">${esc(help)}</span></label>`;
    };
    const main = info.parameters.filter((p) => !PARAMETER_LABELS[p.flag.replace(/^--/, '')]?.advanced);
    const more = info.parameters.filter((p) => PARAMETER_LABELS[p.flag.replace(/^--/, '')]?.advanced);
    const open = (host.querySelector<HTMLDetailsElement>('details.exp-more')?.open ?? false) || more.some((p) => p.name in this.state.given);
    host.innerHTML = `${main.map(field).join('')}<label class="field quick"><span class="param-label">${t('ch.exp.quick')}</span><input type="checkbox" data-quick ${this.state.quick ? 'checked' : ''} ${disabled}><span class="param-help">${esc(t('ch.exp.quickHelp'))}</span></label>${
      more.length ? `<details class="exp-more"${open ? ' open' : ''}><summary>${t('ch.exp.more')}</summary><div class="exp-more-fields">${more.map(field).join('')}</div></details>` : ''
    }`;
  }

  render() {
    for (const step of this.renderSteps()) step();
  }

  /** The panel's drawing in steps: the panel with its tables, then the live view, then each chart. */
  private renderSteps(): (() => void)[] {
    const steps = [() => this.renderPanel()];
    if (!this.info || this.el.dataset.available === '') return steps;
    if (this.live.size || this.liveView) steps.push(() => this.drawLive());
    const r = this.result;
    if (r) r.series.forEach((_, i) => steps.push(() => this.renderSeries(r, this.info!, i)));
    return steps;
  }

  private renderPanel() {
    const info = this.info;
    if (this.el.dataset.available === '') {
      this.el.innerHTML = `<h4><code>${esc(this.name)}</code></h4><p class="muted small">${t('ch.exp.waiting')}</p>`;
      return;
    }
    if (!info) {
      this.el.innerHTML = `<h4><code>${esc(this.name)}</code></h4><p class="muted small exp-missing">${esc(t('ch.exp.notInBuild', { name: this.name }))}</p>`;
      return;
    }
    const r = this.result;
    const phase = this.el.dataset.phase ?? '';
    const status = this.el.querySelector<HTMLElement>('.exp-status')?.textContent ?? '';
    const zh = lang() === 'zh' ? EXPERIMENTS_ZH[info.name] : undefined;
    this.el.innerHTML = `
      <h4><code>${esc(info.name)}</code> <span class="muted small">${esc(t('ch.cite', { s: info.section.replace('§', '') }))}</span></h4>
      <p class="exp-claim"><b>${t('ch.exp.claim')}:</b> ${esc(zh?.claim ?? info.claim)}</p>
      <p class="muted small exp-summary">${esc(zh?.summary ?? info.summary)}</p>
      <div class="exp-controls"></div>
      <div class="exp-buttons">
        <button type="button" class="primary" data-act="run" ${this.running ? 'disabled' : ''}>${t('ch.exp.run')}</button>
        <button type="button" data-act="stop" ${this.running ? '' : 'disabled'}>${t('ch.exp.stop')}</button>
        <button type="button" data-act="reset" ${this.running ? 'disabled' : ''}>${t('ch.exp.reset')}</button>
        <button type="button" data-act="link">${t('ch.exp.link')}</button>
        ${this.running ? '<progress max="1" value="0"></progress>' : ''}
        <span class="exp-status small" role="status">${phase === 'stopped' || phase === 'error' ? esc(status) : ''}</span>
      </div>
      ${this.asked === 'offer' && !this.running && !r ? `<p class="exp-offer" role="note">${t('ch.exp.offer')} <button type="button" class="primary" data-act="run">${t('ch.exp.run')}</button></p>` : ''}
      ${this.links ? `<div class="exp-share small"><label>${t('ch.exp.linkPlain')} <input type="text" readonly data-link="plain" value="${esc(this.links[0])}"></label><label>${t('ch.exp.linkRun')} <input type="text" readonly data-link="run" value="${esc(this.links[1])}"></label></div>` : ''}
      <div class="exp-live"></div>
      ${r ? this.resultHtml(r, info) : ''}`;
    this.renderControls();
    markOverflow(this.el);
  }

  private resultHtml(r: ExperimentResult, info: ExperimentInfo): string {
    // Texts in the page language (i18n/results.ts); data-table keeps the engine's table name.
    const text = new ResultText(info.name, info.messages, r);
    const tr = (s: string) => esc(text.term(s));
    const table = (tb: ExperimentResult['tables'][number]) =>
      `<div class="exp-table"><table data-table="${esc(tb.name)}"><caption>${esc(text.tableTitle(tb.name))}</caption><thead><tr>${tb.columns.map((c) => `<th>${tr(c)}</th>`).join('')}</tr></thead><tbody>${tb.rows
        .map((row) => `<tr>${row.map((c, i) => `<td data-col="${tr(tb.columns[i] ?? '')}">${tr(c)}</td>`).join('')}</tr>`)
        .join('')}</tbody></table></div>`;
    const timing = r.timingMessage ? text.message(r.timingMessage) : r.timing;
    return `
      <div class="exp-result">
        <p class="exp-verdict" data-verdict="${esc(r.verdict)}">${t(`ch.exp.verdict.${r.verdict}`)}</p>
        ${r.verdict === 'untested' && this.state.quick ? `<p class="exp-full small">${t('ch.exp.fullOffer')} <button type="button" data-act="full" ${this.running ? 'disabled' : ''}>${t('ch.exp.runFull')}</button></p>` : ''}
        <p class="exp-conclusion"><b>${t('ch.exp.conclusion')}:</b> <span>${esc(text.message(r.conclusionMessage))}</span></p>
        ${r.tables.map(table).join('')}
        <div class="exp-series"></div>
        ${r.notes.length ? `<p class="small muted exp-notes"><b>${t('ch.exp.notes')}:</b> ${r.notes.map((n) => text.noteHtml(n)).join(' ')}</p>` : ''}
        ${timing ? `<p class="small muted exp-timing"><b>${t('ch.exp.timing')}:</b> ${esc(timing)}</p>` : ''}
        <div class="exp-command"><span class="small">${t('ch.exp.command')}</span><code>${esc(r.command)}</code>
          <button type="button" data-act="copy">${t('ch.exp.copy')}</button><button type="button" data-act="csv">${t('ch.exp.csv')}</button></div>
        <p class="small muted exp-same">${t('ch.exp.sameNumbers')}</p>
        <p class="small muted">${t('ch.exp.elapsed', { s: this.elapsed.toFixed(1) })}</p>
      </div>`;
  }

  /** Draws the result's series i as a chart in the panel's series box. */
  private renderSeries(r: ExperimentResult, info: ExperimentInfo, i: number) {
    const host = this.el.querySelector<HTMLElement>('.exp-series');
    // A redraw in between (a language switch) drew the panel anew, with every chart.
    if (!host || host.children.length !== i) return;
    const text = new ResultText(info.name, info.messages, r);
    const tr = (s: string) => text.term(s);
    const s = r.series[i];
    const cell = document.createElement('div');
    cell.className = 'fig-cell';
    host.appendChild(cell);
    const name = `${this.name}-${i}`;
    const svg = renderLineChart(cell, { name, title: text.tableTitle(s.name), xLabel: tr(s.xLabel), yLabel: tr(s.yLabel), lines: s.lines.map((l) => ({ name: tr(l.name), x: s.x, y: l.y })), ...logAxes(s.x, s.lines.map((l) => l.y)) });
    exportButtons(cell, () => svg, `attnlab-${name}`, { svg: t('ch.export.svg'), png: t('ch.export.png') });
  }
}

/** A result table wider than a box of at most this many pixels (a phone) is stacked. */
const STACK_BELOW_PX = 560;

/**
 * Fits each result table wider than its box: in a narrow box (a phone) it is stacked (data-stacked:
 * a row a block, each cell beside its column's name, chapters.css); in a wider one it scrolls
 * sideways and says so (data-overflow, with the cue's text). Measured again, as a table, whenever
 * the window's width changes.
 */
function markOverflow(root: ParentNode) {
  const boxes = Array.from(root.querySelectorAll<HTMLElement>('.exp-table'));
  // Every box is reset, then measured, then marked: one layout for them all, not one per table.
  for (const box of boxes) {
    box.removeAttribute('data-stacked');
    box.removeAttribute('data-overflow');
  }
  const sizes = boxes.map((box) => ({ over: box.scrollWidth > box.clientWidth + 1, narrow: box.clientWidth < STACK_BELOW_PX }));
  boxes.forEach((box, i) => {
    if (!sizes[i].over) return;
    if (sizes[i].narrow) box.setAttribute('data-stacked', '');
    else {
      box.setAttribute('data-overflow', '');
      box.dataset.cue = t('ch.exp.scrollCue');
    }
  });
}
if (typeof window !== 'undefined') window.addEventListener('resize', () => markOverflow(document));

/** Every table, then every series (x, one column per line), as CSV rows separated by a blank row. */
export function resultCsv(r: ExperimentResult): (string | number | null)[][] {
  const rows: (string | number | null)[][] = [];
  for (const tb of r.tables) rows.push([`# ${tb.name}`], tb.columns, ...tb.rows, []);
  for (const s of r.series) {
    rows.push([`# ${s.name}`], [s.xLabel, ...s.lines.map((l) => l.name)]);
    s.x.forEach((x, i) => rows.push([x, ...s.lines.map((l) => l.y[i])]));
    rows.push([]);
  }
  return rows;
}
