// §10: build an encoder classifier piece by piece, train it, swap its positional encoding and its
// attention, and compare the runs. The pieces, the config and the parameter counts are the engine's
// model's (figures/encoder.compute.ts: encoderParts); training is the engine's Trainer in the
// figures' worker (encoderTrain), its curve streamed as it trains. This module only lays out and
// draws what the worker answers; its state (pieces added, runs) survives a language switch.
import { t, type Key } from '../i18n';
import { renderLineChart, type Line } from '../ui/line_chart';
import { PIECES, type AttentionChoice, type Piece } from '../engine/protocol/encoder';
import type { EncoderChoices, EncoderPartsFigure, EncoderTrainFigure } from './figures/encoder.compute';
import type { FigureSource } from './live_figure';

/** Training steps of one run. */
export const STEPS = 300;
const POSITIONAL = ['sinusoidal', 'learned', 'rope', 'none'] as const;
const ATTENTION: AttentionChoice[] = ['full', 'window', 'linear'];
/** The article's path: the encoder, then each positional encoding, then other attention. */
const PATH: Pick<EncoderChoices, 'positional' | 'attention'>[] = [
  { positional: 'sinusoidal', attention: 'full' }, { positional: 'learned', attention: 'full' }, { positional: 'rope', attention: 'full' },
  { positional: 'none', attention: 'full' }, { positional: 'sinusoidal', attention: 'window' }, { positional: 'sinusoidal', attention: 'linear' },
];
/** The config fields each piece brings (model.config() keys). */
const FIELDS: Record<Piece, string[]> = {
  embedding: ['kind', 'vocabSize', 'maxLen', 'dModel', 'positional', 'pooling', 'numClasses', 'numLayers'],
  attention: ['numHeads', 'numKvHeads', 'variant', 'attentionWindow', 'scale'],
  ffn: ['ffDim', 'activation'],
  residual: [],
  layernorm: ['norm', 'layerNormEps'],
};

interface Run { n: number; result: EncoderTrainFigure }

const esc = (s: unknown) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');
const pct = (v: number) => `${(100 * v).toFixed(1)}%`;
const opt = (v: string | number, label: string, sel: boolean) => `<option value="${v}"${sel ? ' selected' : ''}>${esc(label)}</option>`;

export class EncoderBuilder {
  readonly el: HTMLElement;
  private added = 1;
  private choices: EncoderChoices = { positional: 'sinusoidal', attention: 'full', layers: 1, seed: 1 };
  private parts: EncoderPartsFigure | null = null;
  private partsError: string | null = null;
  private runs: Run[] = [];
  private live: { choices: EncoderChoices; curve: { step: number; loss: number }[] } | null = null;
  private queue: Pick<EncoderChoices, 'positional' | 'attention'>[] = [];
  private version = 0;

  constructor(private readonly source: FigureSource) {
    this.el = document.createElement('section');
    this.el.className = 'encoder-builder';
    this.el.dataset.builder = 'encoder';
    this.el.addEventListener('click', (ev) => this.click(ev.target as HTMLElement));
    this.el.addEventListener('change', (ev) => {
      const s = ev.target as HTMLSelectElement;
      if (!s.dataset.choice) return;
      const k = s.dataset.choice as 'positional' | 'attention' | 'layers';
      this.choices = { ...this.choices, [k]: k === 'layers' ? Number(s.value) : s.value };
      void this.describe();
    });
  }

  /** Draws the builder and asks the engine for the model of the current choices (once). */
  show(): Promise<void> {
    this.render();
    return this.parts ? Promise.resolve() : this.describe();
  }

  private async describe() {
    const v = ++this.version;
    this.el.dataset.parts = 'loading';
    try {
      const d = (await this.source({ figure: 'encoderParts', ...this.choices })) as EncoderPartsFigure;
      if (v !== this.version) return;
      this.parts = d;
      this.partsError = null;
    } catch (e) {
      if (v !== this.version) return;
      this.partsError = e instanceof Error ? e.message : String(e);
    }
    this.render();
  }

  private click(el: HTMLElement) {
    const act = el.closest<HTMLButtonElement>('button[data-act]')?.dataset.act;
    if (act === 'add' && this.added < PIECES.length) (this.added++, this.render());
    else if (act === 'remove' && this.added > 1) (this.added--, this.render());
    else if (act === 'train') void this.train([{ positional: this.choices.positional, attention: this.choices.attention }]);
    else if (act === 'path') void this.train(PATH);
  }

  private async train(list: Pick<EncoderChoices, 'positional' | 'attention'>[]) {
    if (this.live || this.added < PIECES.length) return;
    this.queue = [...list];
    while (this.queue.length) {
      const next = this.queue.shift()!;
      const choices = { ...this.choices, ...next };
      this.live = { choices, curve: [] };
      this.render();
      try {
        const result = (await this.source({ figure: 'encoderTrain', ...choices, steps: STEPS }, (p) => {
          this.live?.curve.push({ step: p.step, loss: p.loss });
          this.renderTraining(p.step);
        })) as EncoderTrainFigure;
        this.runs.push({ n: this.runs.length + 1, result });
      } catch (e) {
        this.queue = [];
        this.partsError = e instanceof Error ? e.message : String(e);
      }
      this.live = null;
    }
    this.render();
  }

  private piecesHtml(): string {
    const p = this.parts;
    const count = (piece: Piece) => (p ? p.parameters.filter((x) => x.piece === piece).reduce((a, x) => a + x.size, 0) : 0);
    return `<ol class="enc-pieces">${PIECES.map((piece, i) => {
      const on = i < this.added;
      return `<li data-piece="${piece}" data-added="${on}" class="${on ? 'on' : 'off'}"><span class="enc-mark">${on ? '✓' : '○'}</span> <b>${t(`ch.enc.piece.${piece}` as Key)}</b> <span class="muted small">${t(`ch.enc.what.${piece}` as Key)}</span>${on ? ` <span class="enc-count" data-count="${count(piece)}">${t('ch.enc.params', { n: count(piece).toLocaleString('en-US') })}</span>` : ''}</li>`;
    }).join('')}</ol>
    <p class="enc-buttons"><button type="button" data-act="add" ${this.added >= PIECES.length || this.live ? 'disabled' : ''}>${this.added < PIECES.length ? t('ch.enc.add', { piece: t(`ch.enc.piece.${PIECES[this.added]}` as Key) }) : t('ch.enc.complete')}</button>
    <button type="button" data-act="remove" class="link" ${this.added <= 1 || this.live ? 'disabled' : ''}>${t('ch.enc.remove')}</button></p>`;
  }

  private tablesHtml(): string {
    const p = this.parts;
    if (!p) return `<p class="muted">${this.partsError ? t('ch.figError', { message: esc(this.partsError) }) : t('ch.enc.loading')}</p>`;
    const present = PIECES.slice(0, this.added);
    const cfg = p.config as unknown as Record<string, unknown>;
    const value = (v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? String(Number(v.toPrecision(6))) : String(v));
    const fields = present.flatMap((piece) => FIELDS[piece].length
      ? [`<tr class="enc-group"><td colspan="2">${t(`ch.enc.piece.${piece}` as Key)}</td></tr>`, ...FIELDS[piece].map((f) => `<tr data-field="${f}"><th><code>${f}</code></th><td>${esc(value(cfg[f]))}</td></tr>`)]
      : []);
    const params = p.parameters.filter((x) => present.includes(x.piece));
    const total = params.reduce((a, x) => a + x.size, 0);
    const complete = this.added === PIECES.length;
    return `<div class="fig-cell"><table class="fig-stats" data-stats="enc-config"><caption>${t('ch.enc.config')}</caption><tbody>${fields.join('')}</tbody></table></div>
      <div class="fig-cell"><table class="fig-stats" data-stats="enc-params"><caption>${t('ch.enc.paramsTitle')}</caption><thead><tr><th>${t('ch.enc.col.tensor')}</th><th>${t('ch.enc.col.shape')}</th><th>${t('ch.enc.col.count')}</th></tr></thead><tbody>${params
        .map((x) => `<tr data-param="${x.name}"><th><code>${x.name}</code></th><td>${x.shape.join(' × ')}</td><td>${x.size.toLocaleString('en-US')}</td></tr>`)
        .join('')}</tbody><tfoot><tr data-total="${total}"><th>${t('ch.enc.total')}</th><td></td><td>${total.toLocaleString('en-US')}</td></tr></tfoot></table>
      <p class="fig-note" data-num-parameters="${p.numParameters}">${complete ? t('ch.enc.totalEngine', { n: p.numParameters.toLocaleString('en-US') }) : t('ch.enc.partial', { n: p.numParameters.toLocaleString('en-US') })}</p></div>`;
  }

  private choicesHtml(): string {
    const dis = this.live ? ' disabled' : '';
    const c = this.choices;
    return `<div class="fig-controls enc-choices">
      <label class="field inline"><span>${t('ch.enc.positional')}</span><select data-choice="positional"${dis}>${POSITIONAL.map((v) => opt(v, t(`ch.enc.pos.${v}` as Key), v === c.positional)).join('')}</select></label>
      <label class="field inline"><span>${t('ch.enc.attention')}</span><select data-choice="attention"${dis}>${ATTENTION.map((v) => opt(v, t(`ch.enc.attn.${v}` as Key), v === c.attention)).join('')}</select></label>
      <label class="field inline"><span>${t('ch.enc.layers')}</span><select data-choice="layers"${dis}>${[1, 2].map((v) => opt(v, String(v), v === c.layers)).join('')}</select></label></div>`;
  }

  private runsHtml(): string {
    if (!this.runs.length) return '';
    const best = Math.max(...this.runs.map((r) => r.result.held.accuracy));
    return `<div class="fig-cell fig-wide"><table class="fig-stats" data-stats="enc-runs"><caption>${t('ch.enc.runs')}</caption><thead><tr><th>#</th><th>${t('ch.enc.positional')}</th><th>${t('ch.enc.attention')}</th><th>${t('ch.enc.layers')}</th><th>${t('ch.enc.col.count')}</th><th>${t('ch.enc.col.trainLoss')}</th><th>${t('ch.enc.col.trainAcc')}</th><th>${t('ch.enc.col.heldAcc')}</th></tr></thead><tbody>${this.runs
      .map(({ n, result: r }) => {
        const last = r.curve[r.curve.length - 1];
        return `<tr data-run="${n}" data-positional="${r.choices.positional}" data-attention="${r.choices.attention}" data-loss="${last.loss}" data-held-accuracy="${r.held.accuracy}"${r.held.accuracy === best ? ' class="best"' : ''}><th>${n}</th><td>${t(`ch.enc.pos.${r.choices.positional}` as Key)}</td><td>${t(`ch.enc.attn.${r.choices.attention}` as Key)}</td><td>${r.choices.layers}</td><td>${r.numParameters.toLocaleString('en-US')}</td><td>${last.loss.toFixed(4)}</td><td>${pct(last.accuracy)}</td><td>${pct(r.held.accuracy)}</td></tr>`;
      })
      .join('')}</tbody></table><p class="fig-note">${t('ch.enc.runsNote', { steps: STEPS, n: this.runs[0].result.held.count })}</p></div>`;
  }

  private renderTraining(step: number) {
    const status = this.el.querySelector<HTMLElement>('.enc-status');
    if (status && this.live) status.textContent = t('ch.enc.training', { step, total: STEPS, left: this.queue.length, loss: this.live.curve.at(-1)?.loss.toFixed(3) ?? '' });
    this.renderChart();
  }

  private renderChart() {
    const host = this.el.querySelector<HTMLElement>('.enc-chart');
    if (!host) return;
    const label = (c: EncoderChoices) => `${t(`ch.enc.pos.${c.positional}` as Key)} · ${t(`ch.enc.attn.${c.attention}` as Key)}`;
    const lines: Line[] = this.runs.map(({ n, result }) => ({ name: `${n}. ${label(result.choices)}`, x: result.curve.map((p) => p.step), y: result.curve.map((p) => p.loss) }));
    if (this.live) lines.push({ name: `${this.runs.length + 1}. ${label(this.live.choices)}`, x: this.live.curve.map((p) => p.step), y: this.live.curve.map((p) => p.loss) });
    host.innerHTML = '';
    if (!lines.length) return;
    renderLineChart(host, { name: 'enc-loss', title: t('ch.enc.chart'), xLabel: t('ch.enc.step'), yLabel: t('ch.enc.loss'), lines, width: Math.min(560, Math.max(300, (this.el.clientWidth || 560) - 10)) });
  }

  render() {
    const complete = this.added === PIECES.length;
    this.el.dataset.pieces = String(this.added);
    this.el.dataset.phase = this.live ? 'training' : this.runs.length ? 'trained' : 'idle';
    this.el.dataset.runs = String(this.runs.length);
    if (this.parts) this.el.dataset.parts = 'ready';
    this.el.innerHTML = `<h3>${t('ch.enc.title')}</h3><p>${t('ch.enc.intro', { task: this.parts?.task.name ?? 'brackets', T: this.parts?.task.seqLen ?? '' })}</p>
      ${this.choicesHtml()}
      <div class="enc-build">${this.piecesHtml()}</div>
      <div class="fig-body">${this.tablesHtml()}</div>
      <h4>${t('ch.enc.trainTitle')}</h4>
      <p class="enc-buttons"><button type="button" class="primary" data-act="train" ${!complete || this.live ? 'disabled' : ''}>${t('ch.enc.train', { steps: STEPS })}</button>
      <button type="button" data-act="path" ${!complete || this.live ? 'disabled' : ''}>${t('ch.enc.path', { n: PATH.length })}</button>
      <span class="enc-status muted small" role="status">${complete ? '' : t('ch.enc.needAll')}</span></p>
      <div class="enc-chart"></div>
      ${this.runsHtml()}`;
    this.renderChart();
    if (this.live) this.renderTraining(this.live.curve.at(-1)?.step ?? 0);
  }
}
