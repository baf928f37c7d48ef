// The walkthrough's main column, drawn from the store: the step's title and head picker, the notes
// above the stage (cross-attention, numerics, the beat's caption), the stage itself (the current
// step script, steps/, drawing the engine's trace), its explanation, and the status line; an error
// takes the stage's place.
import { t } from '../i18n';
import { setHead, setHover } from './actions';
import { readSentence } from './inputs';
import { cellSize } from './layout';
import { renderNumerics } from './numerics';
import type { WalkState } from './state';
import type { StepContext } from './step';
import { STEPS } from './steps';

export interface WalkStage {
  /** Draws the state; the link's notices (still shown) are listed with the sentence's. */
  render(s: WalkState, urlNotices: string[]): void;
  /** The next render draws the stage again even if nothing it depends on changed. */
  invalidate(): void;
}

export function mountStage(root: HTMLElement, redraw: () => void): WalkStage {
  const el = <T extends Element>(sel: string) => root.querySelector<T>(sel)!;
  const stageHost = el<HTMLElement>('.stage');
  el<HTMLElement>('.head-picker').addEventListener('click', (ev) => {
    const b = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-head]');
    if (b) setHead(Number(b.dataset.head));
  });

  let renderedKey = '';
  let lastWidth = 0;
  new ResizeObserver(() => {
    const w = stageHost.clientWidth;
    if (Math.abs(w - lastWidth) > 24) {
      lastWidth = w;
      renderedKey = '';
      redraw();
    }
  }).observe(el<HTMLElement>('.stage-wrap'));

  /** Notes and status around the stage; false when an error takes the stage's place. */
  function renderFrame(s: WalkState, urlNotices: string[]): boolean {
    el<HTMLElement>('.step-title').textContent = `${s.step + 1}. ${STEPS[s.step].title()}`;
    el<HTMLElement>('.problems').textContent = s.status === 'error' ? (s.error ?? '') : '';
    const notices = [...urlNotices, ...(s.settings.model === 'random' ? readSentence(s.settings.sentence).notices : [])];
    const noticeKey = notices.join('\n');
    const noticeList = el<HTMLElement>('.notices');
    if (noticeList.dataset.key !== noticeKey) {
      noticeList.dataset.key = noticeKey;
      noticeList.replaceChildren(...notices.map((n) => Object.assign(document.createElement('li'), { textContent: n })));
    }
    el<HTMLElement>('.status').textContent =
      s.status === 'loading-engine'
        ? t('walk.status.loading')
        : s.status === 'computing'
          ? t('walk.status.computing')
          : s.trace && s.status === 'ready'
            ? t('walk.status.ready', { ms: s.trace.elapsedMs.toFixed(1) })
            : '';
    root.classList.toggle('busy', s.status === 'computing');
    // An error takes the stage's place: the previous trace no longer matches the settings.
    const failed = s.status === 'error';
    const errorBox = el<HTMLElement>('.stage-error');
    errorBox.hidden = !failed;
    stageHost.hidden = failed;
    el<HTMLElement>('.explain').hidden = failed;
    el<HTMLElement>('.beat-caption').hidden = failed;
    el<HTMLElement>('.head-picker').hidden = failed;
    if (failed) {
      errorBox.innerHTML = `<p class="error-title">${t('walk.error.title')}</p><p class="error-text"></p><p class="muted">${t(window.innerWidth <= 900 ? 'walk.error.fixBelow' : 'walk.error.fixLeft')}</p>`;
      errorBox.querySelector('.error-text')!.textContent = s.error ?? '';
      renderedKey = '';
    }
    return !failed;
  }

  /** The head picker of a per-head step (nothing with one head). */
  function renderHeadPicker(s: WalkState, H: number) {
    const picker = el<HTMLElement>('.head-picker');
    const pickerKey = STEPS[s.step].perHead && H > 1 ? String(H) : '';
    if (picker.dataset.key !== pickerKey) {
      picker.dataset.key = pickerKey;
      picker.innerHTML = pickerKey
        ? `<span class="muted" data-i18n="walk.head">${t('walk.head')}</span>${Array.from({ length: H }, (_, h) => `<button type="button" data-head="${h}" style="--head-i:${h}">${h}</button>`).join('')}`
        : '';
    }
    picker.querySelectorAll<HTMLButtonElement>('button[data-head]').forEach((b) => {
      const on = Number(b.dataset.head) === s.head;
      b.classList.toggle('on', on);
      b.setAttribute('aria-pressed', String(on));
    });
  }

  // Each render is a new drawing of the stage; a part of the previous one still waiting for its
  // frame (StepContext.later) is dropped, since the new drawing draws everything itself.
  let drawing = 0;
  function render(s: WalkState, urlNotices: string[]) {
    const step = STEPS[s.step];
    const generation = ++drawing;
    delete stageHost.dataset.drawing;
    if (!renderFrame(s, urlNotices) || !s.trace || !s.input || !s.derived) return;

    renderNumerics(el<HTMLElement>('.numerics-strip'), s);
    const crossNote = el<HTMLElement>('.cross-note');
    const ctxIn = s.input.context;
    crossNote.hidden = !ctxIn;
    crossNote.textContent = ctxIn ? t('walk.cross.note', { T: s.input.tokens.length, S: ctxIn.tokens.length, query: s.input.tokens.join(' '), context: ctxIn.tokens.join(' ') }) : '';
    renderHeadPicker(s, s.derived.H);

    const width = stageHost.clientWidth || 900;
    const failedDrawing = (e: unknown) => {
      stageHost.textContent = t('walk.drawFailed', { message: e instanceof Error ? e.message : String(e) });
    };
    const later = (draw: () => void) => {
      stageHost.dataset.drawing = '1';
      requestAnimationFrame(() => {
        if (generation !== drawing) return;
        delete stageHost.dataset.drawing;
        try {
          draw();
        } catch (e) {
          failedDrawing(e);
        }
      });
    };
    const baseCtx = { settings: s.traced ?? s.settings, input: s.input, trace: s.trace, scaledOn: s.scaledOn, derived: s.derived, head: s.head, beat: s.beat, hover: s.hover, cell: 30, setHover, later };
    // No matrix of a step is wider than the sequence or the model (S or C columns).
    const ctx: StepContext = { ...baseCtx, cell: cellSize(width, step.columns(baseCtx), Math.max(s.derived.S, s.derived.C)) };
    const key = `${s.step}|${s.version}|${s.head}|${ctx.cell}`;
    if (key !== renderedKey) {
      stageHost.replaceChildren();
      stageHost.dataset.stage = step.id;
      stageHost.classList.remove('enter');
      void stageHost.offsetWidth; // restart the fade-in
      stageHost.classList.add('enter');
      el<HTMLElement>('.explain').innerHTML = step.explain(ctx);
      renderedKey = key;
    }
    const resting = s.playing && s.beat === 0 && s.restMs > 0;
    el<HTMLElement>('.beat-caption').textContent = step.caption(ctx) || (resting ? t('walk.caption.resting', { s: Math.round(s.restMs / 1000) }) : '');
    try {
      step.render(stageHost, ctx);
    } catch (e) {
      failedDrawing(e);
    }
  }

  return { render, invalidate: () => (renderedKey = '') };
}
