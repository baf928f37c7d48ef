// One chapter figure as the reader sees it: its controls (kept in the URL), a loading or training
// state while the engine worker computes, an error in words when it cannot, then the figure's
// drawing of the worker's answer (figures/figure.ts).
import { t } from '../i18n';
import type { FigureData, FigureProgress, FigureRequest } from '../engine/protocol/chapters';
import { drawAll } from './figures/draw';
import type { AnyFigure, Control } from './figures/figure';
import { readFigure, readFigureText, writeFigure, writeFigureText } from './figures/url';

/** Computes a figure in the engine worker; trained figures report their training progress. */
export type FigureSource = (r: FigureRequest, onProgress?: (p: FigureProgress) => void) => Promise<FigureData>;

export class LiveFigure {
  readonly el: HTMLElement;
  private controls: Control[];
  private version = 0;

  constructor(
    private readonly figure: AnyFigure,
    private readonly source: FigureSource,
    /** A link to this figure as the reader set it (chapters/url.ts figureLink). */
    private readonly link: () => string = () => location.href,
  ) {
    const id = figure.id;
    this.el = document.createElement('div');
    this.el.className = 'fig-block';
    this.el.dataset.figure = id;
    const url = new URL(location.href);
    this.controls = figure.controls.map((c) => ({ ...c, value: typeof c.value === 'number' ? readFigure(url, id, c.name, c.value) : readFigureText(url, id, c.name, c.value) }));
    this.el.addEventListener('click', (ev) => {
      if (!(ev.target as HTMLElement).closest('button[data-act="fig-link"]')) return;
      const href = this.link();
      let share = this.el.querySelector<HTMLElement>('.fig-share');
      if (!share) {
        share = document.createElement('label');
        share.className = 'fig-share small';
        this.el.querySelector('.fig-controls')!.appendChild(share);
      }
      share.innerHTML = `${t('ch.fig.linkTo')} <input type="text" readonly data-link="figure">`;
      const input = share.querySelector('input')!;
      input.value = href;
      input.select();
      void navigator.clipboard?.writeText(href).catch(() => {});
    });
    this.el.addEventListener('change', (ev) => {
      const s = ev.target as HTMLSelectElement;
      const c = this.controls.find((k) => k.name === s.dataset.control);
      if (!c) return;
      c.value = typeof c.values[0] === 'number' ? Number(s.value) : s.value;
      if (typeof c.value === 'number') writeFigure(id, c.name, c.value);
      else writeFigureText(id, c.name, c.value);
      void this.draw();
    });
  }

  get id(): string {
    return this.figure.id;
  }

  private value = (name: string): number | string => this.controls.find((c) => c.name === name)!.value;

  async draw() {
    const v = ++this.version;
    const bar = this.controls
      .map((c) => `<label class="field inline"><span>${t(c.label)}</span><select data-control="${c.name}">${c.values.map((x) => `<option value="${x}"${x === c.value ? ' selected' : ''}>${c.labels?.[String(x)] ? t(c.labels[String(x)]) : x}</option>`).join('')}</select></label>`)
      .join('');
    this.el.dataset.state = 'loading';
    const request = this.figure.request(this.value);
    if (this.figure.trained) this.el.innerHTML = `<div class="fig-training"><p class="small" role="status">${t('ch.fig.training.start')}</p><progress max="1" value="0"></progress></div>`;
    let data: FigureData;
    try {
      data = await this.source(request, (p) => {
        if (v !== this.version) return;
        const status = this.el.querySelector<HTMLElement>('.fig-training p');
        if (status) status.textContent = t('ch.fig.training.progress', { step: p.step, total: p.total, loss: p.loss.toFixed(3) });
        const progress = this.el.querySelector<HTMLProgressElement>('.fig-training progress');
        if (progress) progress.value = p.step / p.total;
      });
    } catch (e) {
      if (v !== this.version) return;
      this.el.innerHTML = `<p class="fig-error">${t('ch.figError', { message: e instanceof Error ? e.message : String(e) })}</p>`;
      this.el.dataset.state = 'error';
      return;
    }
    if (v !== this.version) return;
    this.el.innerHTML = `<div class="fig-controls">${bar}<button type="button" class="link fig-link" data-act="fig-link">${t('ch.fig.link')}</button></div>`;
    const body = document.createElement('div');
    body.className = 'fig-body';
    this.el.appendChild(body);
    await drawAll(() => this.figure.draw(body, data as never, this.value));
    if (v !== this.version) return;
    this.el.dataset.state = 'ready';
  }
}
