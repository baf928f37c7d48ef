// The walkthrough view: settings form, step list, the current step's stage and explanation,
// and the player controls. Reads walkStore; changes it only through actions.ts.
import { D_MODELS, EXAMPLES, FORMAT_MAX, HEAD_COUNTS, INPUT_SCALES, MASKS, NORMALIZERS, PRECISIONS, MAX_SEED, MAX_TOKENS, POSITIONALS, headsProblem, kvHeadsProblem, readSentence, ropeProblem, type WalkSettings } from './inputs';
import { compute, gotoStep, next, pause, prev, restore, setHead, setHover, setSpeed, togglePlay } from './actions';
import { walkFromUrl, walkToUrl } from './url';
import { cellSize } from './layout';
import { SPEEDS, walkStore, type WalkState } from './state';
import type { StepContext } from './step';
import { FIRST_BACKWARD_STEP, FIRST_GENERATION_STEP, STEPS } from './steps';
import { labStore, type LabState } from '../lab/state';
import { taskLabel } from '../lab/settings';
import { attr, onLang, span, t, translate } from '../i18n';

const opt = (v: string | number, label: string | number = v) => `<option value="${v}">${label}</option>`;

/**
 * The engine's numerics of the current trace in one line: the largest |scaled score| against the
 * format's largest finite value, and the ±∞, NaN and flushed counts over every stage (Trace.numerics).
 */
function renderNumerics(host: HTMLElement, s: WalkState) {
  const n = s.trace?.numerics;
  const precision = s.trace?.request.precision ?? 'fp32';
  host.hidden = !n || (precision === 'fp32' && (s.traced?.inputScale ?? 1) === 1);
  if (!n || host.hidden) return;
  const all = Object.values(n).filter((x): x is NonNullable<typeof x> => x != null);
  const sum = (k: 'posInf' | 'negInf' | 'nan' | 'flushed') => all.reduce((a, x) => a + x[k], 0);
  // -inf in the masked stage is the mask's; the ones elsewhere are overflow.
  const negInf = sum('negInf') - countMaskedCells(s);
  const maxScore = n.scaled?.maxAbs ?? 0;
  const limit = FORMAT_MAX[precision];
  const over = sum('posInf') + negInf + sum('nan');
  host.innerHTML = t('walk.numerics', { precision, max: maxScore.toPrecision(4), limit: limit.toPrecision(5), share: ((maxScore / limit) * 100).toPrecision(3) }) +
    ` · <span class="${over ? 'over' : ''}">${t('walk.numerics.counts', { posInf: sum('posInf'), negInf, nan: sum('nan'), flushed: sum('flushed') })}</span>` +
    `<span class="marks-key"> · <i class="key-over"></i>${t('walk.numerics.keyOver')} <i class="key-flushed"></i>${t('walk.numerics.keyFlushed')}</span>`;
}

/** Cells the mask hides (their -inf is by design), over all heads. */
function countMaskedCells(s: WalkState): number {
  const m = s.trace?.stages.masked;
  const sc = s.trace?.stages.scaled;
  if (!m || !sc) return 0;
  let n = 0;
  m.heads.forEach((t, h) => t.data.forEach((v, k) => (n += v === -Infinity && sc.heads[h].data[k] !== -Infinity ? 1 : 0)));
  return n;
}

export function mountWalkthrough(root: HTMLElement) {
  // The stage comes first in the document (and so in the tab order and on a phone's one column);
  // on wide screens the grid puts the settings beside it, on the left.
  root.innerHTML = `
  <div class="walk">
    <section class="walk-main" ${attr('aria-label', 'walk.aria.main')}>
      <div class="player" role="toolbar" ${attr('aria-label', 'walk.aria.player')}>
        <button type="button" data-act="prev" ${attr('title', 'walk.prev.title')}>◀◀</button>
        <button type="button" data-act="play" class="play" ${attr('title', 'walk.play.title')}>${t('walk.play')}</button>
        <button type="button" data-act="next" ${attr('title', 'walk.next.title')}>▶▶</button>
        <label class="speed">${span('walk.speed')} <select name="speed">${SPEEDS.map((s) => opt(s, `${s}×`)).join('')}</select></label>
        <div class="progress"><div class="bar"></div></div>
        <span class="kbd-hint" data-i18n="walk.kbdHint">${t('walk.kbdHint')}</span>
        <div class="rest" ${attr('title', 'walk.rest.title')}><div class="rest-bar"></div></div>
      </div>
      <header class="step-head">
        <h2 class="step-title" aria-live="polite"></h2>
        <div class="head-picker" role="group" ${attr('aria-label', 'walk.aria.head')}></div>
        <a class="to-settings" href="#walk-settings" data-i18n="walk.toSettings">${t('walk.toSettings')}</a>
      </header>
      <p class="cross-note" hidden></p>
      <p class="numerics-strip" hidden></p>
      <p class="beat-caption"></p>
      <div class="stage-wrap"><div class="stage" data-stage=""></div><div class="stage-error" role="alert" hidden></div></div>
      <div class="explain"></div>
      <p class="status"></p>
    </section>
    <aside class="walk-side" id="walk-settings">
      <form class="settings" autocomplete="off" onsubmit="return false" ${attr('aria-label', 'walk.aria.settings')}>
        <label class="field wide">${span('walk.model')}
          <select name="model"><option value="random" data-i18n="walk.model.random">${t('walk.model.random')}</option><option value="trained" disabled></option></select>
        </label>
        <label class="field wide trained-only">${span('walk.input')} <span class="hint model-hint"></span>
          <input name="modelInput" type="text" spellcheck="false" ${attr('placeholder', 'walk.input.placeholder')} />
        </label>
        <label class="field trained-only">${span('walk.layer')} <select name="layer"></select></label>
        <label class="field wide random-only">${span('walk.sentence')} <span class="hint sentence-hint"></span>
          <input name="sentence" type="text" spellcheck="false" />
        </label>
        <label class="field wide random-only">${span('walk.context')} <span class="hint" data-i18n="walk.context.hint">${t('walk.context.hint')}</span>
          <input name="context" type="text" spellcheck="false" />
        </label>
        <label class="field wide random-only">${span('walk.example')}
          <select name="example"><option value="" data-i18n="walk.example.choose">${t('walk.example.choose')}</option>${EXAMPLES.map((_, i) => opt(i)).join('')}</select>
        </label>
        <label class="field random-only">d_model <select name="dModel">${D_MODELS.map((v) => opt(v)).join('')}</select></label>
        <label class="field random-only">${span('walk.heads')} <select name="heads">${HEAD_COUNTS.map((v) => opt(v)).join('')}</select></label>
        <label class="field random-only">${span('walk.kvHeads')} <select name="kvHeads">${HEAD_COUNTS.map((v) => opt(v)).join('')}</select></label>
        <label class="field random-only">${span('walk.positions')} <select name="positional">${POSITIONALS.map((p) => opt(p.id)).join('')}</select></label>
        <label class="field random-only">${span('walk.seed')} <input name="seed" type="number" min="0" max="${MAX_SEED}" step="1" /></label>
        <label class="field check random-only"><input name="scale" type="checkbox" /> ${span('walk.scale')}</label>
        <label class="field wide random-only">${span('walk.mask')} <select name="mask">${MASKS.map((m) => opt(m.id)).join('')}</select></label>
        <label class="field random-only">${span('walk.normalizer')} <select name="normalizer">${NORMALIZERS.map((n) => opt(n)).join('')}</select></label>
        <label class="field random-only">${span('walk.precision')} <select name="precision">${PRECISIONS.map((n) => opt(n)).join('')}</select></label>
        <label class="field random-only">${span('walk.inputScale')} <select name="inputScale">${INPUT_SCALES.map((n) => opt(n, `×${n}`)).join('')}</select></label>
        <p class="problems" role="alert"></p>
        <ul class="notices" aria-live="polite"></ul>
      </form>
      <nav class="steps" ${attr('aria-label', 'walk.aria.steps')}>
        <ol>${STEPS.map((_, i) => `${i === FIRST_BACKWARD_STEP ? `<li class="steps-part" aria-hidden="true" data-i18n="walk.steps.backward">${t('walk.steps.backward')}</li>` : ''}${i === FIRST_GENERATION_STEP ? `<li class="steps-part" aria-hidden="true" data-i18n="walk.steps.generation">${t('walk.steps.generation')}</li>` : ''}<li${i >= FIRST_BACKWARD_STEP && i < FIRST_GENERATION_STEP ? ' class="backward"' : ''}><button type="button" data-step="${i}"><span class="n">${i + 1}</span><span class="t"></span></button></li>`).join('')}</ol>
      </nav>
    </aside>
  </div>`;

  const form = root.querySelector<HTMLFormElement>('form.settings')!;
  const el = <T extends Element>(sel: string) => root.querySelector<T>(sel)!;
  const stageHost = el<HTMLElement>('.stage');

  // ---- settings -> compute ----
  const readForm = (): WalkSettings => {
    const f = new FormData(form);
    return {
      sentence: String(f.get('sentence') ?? ''),
      dModel: Number(f.get('dModel')),
      heads: Number(f.get('heads')),
      kvHeads: Number(f.get('kvHeads')),
      positional: f.get('positional') as WalkSettings['positional'],
      mask: f.get('mask') as WalkSettings['mask'],
      scale: (form.elements.namedItem('scale') as HTMLInputElement).checked,
      // As typed: a seed out of range or not whole is reported (settingsProblems), not changed.
      seed: String(f.get('seed') ?? '').trim() === '' ? NaN : Number(f.get('seed')),
      model: f.get('model') === 'trained' ? 'trained' : 'random',
      layer: Math.max(0, Number(f.get('layer')) || 0),
      modelInput: String(f.get('modelInput') ?? ''),
      context: String(f.get('context') ?? ''),
      normalizer: (f.get('normalizer') ?? 'softmax') as WalkSettings['normalizer'],
      precision: (f.get('precision') ?? 'fp32') as WalkSettings['precision'],
      inputScale: Number(f.get('inputScale') ?? 1),
    };
  };
  const writeForm = (s: WalkSettings) => {
    const set = (name: string, v: string) => ((form.elements.namedItem(name) as HTMLInputElement).value = v);
    set('sentence', s.sentence);
    set('dModel', String(s.dModel));
    set('heads', String(s.heads));
    set('kvHeads', String(s.kvHeads));
    set('positional', s.positional);
    set('mask', s.mask);
    set('seed', String(s.seed));
    (form.elements.namedItem('scale') as HTMLInputElement).checked = s.scale;
    set('model', s.model);
    set('modelInput', s.modelInput);
    set('context', s.context ?? '');
    set('normalizer', s.normalizer ?? 'softmax');
    set('precision', s.precision ?? 'fp32');
    set('inputScale', String(s.inputScale ?? 1));
    showModelFields(s.model);
    markChoices();
  };
  /**
   * Disables the heads, K/V heads and positions that cannot work with the other choices, each with
   * its reason as the option's title (and on the select, read on hover).
   */
  const markChoices = () => {
    const d = Number((form.elements.namedItem('dModel') as HTMLSelectElement).value);
    const heads = Number((form.elements.namedItem('heads') as HTMLSelectElement).value);
    const mark = (name: string, why: (o: HTMLOptionElement) => string | null) => {
      const sel = form.elements.namedItem(name) as HTMLSelectElement;
      const reasons: string[] = [];
      for (const o of Array.from(sel.options)) {
        const r = why(o);
        o.dataset.label ??= o.textContent ?? '';
        o.disabled = r !== null;
        o.title = r ?? '';
        // The open list says "not available" without a hover; the reason is the option's title.
        o.textContent = r ? t('walk.option.unavailable', { label: o.dataset.label }) : o.dataset.label;
        if (r) reasons.push(`${o.dataset.label}: ${r}`);
      }
      sel.title = reasons.length ? t('walk.select.unavailable', { reasons: reasons.join(' ') }) : '';
    };
    mark('heads', (o) => headsProblem(d, Number(o.value)));
    mark('kvHeads', (o) => kvHeadsProblem(heads, Number(o.value)));
    mark('positional', (o) => (o.value === 'rope' ? ropeProblem(d, heads) : null));
  };
  /** The texts of the form and the step list that follow the language (the static ones follow translate). */
  const relabel = () => {
    const options = (name: string, label: (o: HTMLOptionElement) => string | null) => {
      for (const o of Array.from((form.elements.namedItem(name) as HTMLSelectElement).options)) {
        const l = label(o);
        if (l !== null) o.dataset.label = o.textContent = l;
      }
    };
    options('positional', (o) => POSITIONALS.find((p) => p.id === o.value)?.label() ?? null);
    options('mask', (o) => MASKS.find((m) => m.id === o.value)?.label() ?? null);
    options('example', (o) => EXAMPLES[Number(o.value)]?.label() ?? (o.value === '' ? t('walk.example.choose') : null));
    options('heads', (o) => o.value);
    options('kvHeads', (o) => o.value);
    el<HTMLElement>('.sentence-hint').textContent = t('walk.sentence.hint', { n: MAX_TOKENS });
    root.querySelectorAll<HTMLElement>('nav.steps button .t').forEach((e, i) => (e.textContent = STEPS[i].title()));
    markChoices();
  };
  const showModelFields = (model: WalkSettings['model']) => {
    root.querySelectorAll<HTMLElement>('.random-only').forEach((e) => (e.hidden = model === 'trained'));
    root.querySelectorAll<HTMLElement>('.trained-only').forEach((e) => (e.hidden = model !== 'trained'));
  };

  // ---- the lab's model: "trained in the lab" is offered once the lab has one ----
  const modelSelect = form.elements.namedItem('model') as HTMLSelectElement;
  const layerSelect = form.elements.namedItem('layer') as HTMLSelectElement;
  // While training runs the model exists but changes every step: it is offered, and traced again when training stops.
  const hasModel = (l: LabState) => l.phase === 'ready' || l.phase === 'training' || l.phase === 'paused' || l.phase === 'done';
  let labKey = '';
  const followLab = (l: LabState) => {
    const available = hasModel(l);
    const key = `${available}|${l.phase === 'training' ? 'training' : `${l.phase}|${l.metrics.length}`}|${l.settings.layers}|${l.settings.task}`;
    if (key === labKey) return;
    labKey = key;
    const trained = modelSelect.options[1];
    trained.disabled = !available;
    trained.textContent = available ? t('walk.model.trained', { task: taskLabel(l.settings.task) }) : t('walk.model.trainedNone');
    const layer = Math.min(Number(layerSelect.value) || 0, l.settings.layers - 1);
    layerSelect.innerHTML = Array.from({ length: l.settings.layers }, (_, i) => opt(i, t('walk.layer.n', { n: i }))).join('');
    layerSelect.value = String(layer);
    el<HTMLElement>('.model-hint').textContent = t('walk.input.hint', { task: taskLabel(l.settings.task) });
    if (!available && modelSelect.value === 'trained') {
      modelSelect.value = 'random';
      showModelFields('random');
      void compute(readForm());
    } else if (available && l.phase !== 'training' && modelSelect.value === 'trained' && walkStore.get().status !== 'loading-engine') {
      void compute(readForm()); // the model changed (more training, a new checkpoint): show its new weights
    }
  };
  // ---- settings <-> URL: a link reopens this walkthrough (url.ts) ----
  // A link's values that cannot be used are reported (urlNotices) and the address bar is corrected
  // to what is shown, so the URL and the form always agree.
  const openedAt = new URL(location.href);
  const fromUrl = walkFromUrl(openedAt);
  // Shown until the reader changes a setting (then the form, not the link, describes the walkthrough).
  let urlNotices = fromUrl.notices;
  restore(fromUrl);
  const urlOf = (s: WalkState, base: URL) => walkToUrl({ settings: s.settings, speed: s.speed, step: s.step, head: s.head }, base);
  const urlKey = (s: WalkState) => urlOf(s, new URL('http://k/')).search;
  // A clean link is left as it is until the reader changes something; a corrected one is rewritten at once.
  let writtenKey = urlNotices.length ? '' : urlKey(walkStore.get());
  const followUrl = (s: WalkState) => {
    if (s.settings.model !== 'random' || root.hidden) return;
    const key = urlKey(s);
    if (key === writtenKey) return;
    writtenKey = key;
    history.replaceState(null, '', urlOf(s, new URL(location.href)));
  };
  relabel();
  writeForm(walkStore.get().settings);
  let debounce: number | undefined;
  form.addEventListener('input', (ev) => {
    const t = ev.target as HTMLInputElement;
    if (t.name === 'example') {
      const ex = EXAMPLES[Number(t.value)];
      if (ex) (form.elements.namedItem('sentence') as HTMLInputElement).value = ex.sentence;
      t.value = '';
    }
    if (t.name === 'model') showModelFields(t.value === 'trained' ? 'trained' : 'random');
    if (t.name === 'heads') {
      // Keep K/V heads valid: default to plain multi-head attention.
      (form.elements.namedItem('kvHeads') as HTMLSelectElement).value = t.value;
    }
    markChoices();
    urlNotices = [];
    clearTimeout(debounce);
    debounce = window.setTimeout(() => void compute(readForm()), t.name === 'sentence' || t.name === 'modelInput' || t.name === 'context' ? 250 : 0);
  });

  // ---- navigation ----
  el<HTMLElement>('nav.steps').addEventListener('click', (ev) => {
    const b = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-step]');
    if (b) gotoStep(Number(b.dataset.step));
  });
  el<HTMLElement>('.player').addEventListener('click', (ev) => {
    const act = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-act]')?.dataset.act;
    if (act === 'prev') prev();
    else if (act === 'next') next();
    else if (act === 'play') togglePlay();
  });
  el<HTMLSelectElement>('select[name="speed"]').addEventListener('change', (ev) => setSpeed(Number((ev.target as HTMLSelectElement).value)));
  el<HTMLElement>('.head-picker').addEventListener('click', (ev) => {
    const b = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-head]');
    if (b) setHead(Number(b.dataset.head));
  });
  window.addEventListener('keydown', (ev) => {
    if (root.hidden || ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    // Keys typed into a control, and Space on a focused button, tab, link or cell, belong to it.
    const t = ev.target as HTMLElement;
    if (t.closest('input, select, textarea, [contenteditable="true"]')) return;
    if (ev.key === ' ' && t.closest('button, a[href], [role="tab"], summary, [tabindex]')) return;
    if (ev.key === 'ArrowRight') next();
    else if (ev.key === 'ArrowLeft') prev();
    else if (ev.key === ' ') togglePlay();
    else return;
    ev.preventDefault();
  });
  el<HTMLSelectElement>('select[name="speed"]').value = String(walkStore.get().speed);

  // ---- render from the store ----
  let renderedKey = '';
  let lastWidth = 0;
  const ro = new ResizeObserver(() => {
    const w = stageHost.clientWidth;
    if (Math.abs(w - lastWidth) > 24) {
      lastWidth = w;
      renderedKey = '';
      render(walkStore.get());
    }
  });
  ro.observe(el<HTMLElement>('.stage-wrap'));
  // The player sticks below the page header while that header sticks (wide screens), else at the top.
  const pageHeader = document.querySelector<HTMLElement>('header.top');
  const placePlayer = () => {
    const h = pageHeader && getComputedStyle(pageHeader).position === 'sticky' ? pageHeader.offsetHeight : 0;
    root.style.setProperty('--player-top', `${h}px`);
  };
  if (pageHeader) new ResizeObserver(placePlayer).observe(pageHeader);
  window.addEventListener('resize', placePlayer);
  placePlayer();

  /** The reading-time bar: empties over the time playback rests on this picture. */
  let restKey = '';
  function showRest(s: WalkState) {
    const bar = el<HTMLElement>('.rest-bar');
    const key = s.playing && s.restMs > 0 ? `${s.step}|${s.version}|${s.restMs}` : '';
    if (key === restKey) return;
    restKey = key;
    el<HTMLElement>('.rest').classList.toggle('on', key !== '');
    bar.style.animation = 'none';
    void bar.offsetWidth; // restart the animation
    bar.style.animation = key ? `rest-drain ${s.restMs}ms linear forwards` : '';
  }

  // Each render is a new drawing of the stage; a part of the previous one still waiting for its
  // frame (StepContext.later) is dropped, since the new drawing draws everything itself.
  let drawing = 0;
  function render(s: WalkState) {
    const step = STEPS[s.step];
    const generation = ++drawing;
    delete stageHost.dataset.drawing;
    root.querySelectorAll<HTMLButtonElement>('nav.steps button').forEach((b, i) => {
      b.classList.toggle('current', i === s.step);
      b.classList.toggle('done', i < s.step);
      b.setAttribute('aria-current', i === s.step ? 'step' : 'false');
    });
    el<HTMLElement>('.step-title').textContent = `${s.step + 1}. ${step.title()}`;
    el<HTMLButtonElement>('button.play').textContent = s.playing ? t('walk.pause') : t('walk.play');
    el<HTMLElement>('.progress .bar').style.width = `${((s.step + 1) / STEPS.length) * 100}%`;
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
    showRest(s);
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
      return;
    }
    if (!s.trace || !s.input || !s.derived) return;

    renderNumerics(el<HTMLElement>('.numerics-strip'), s);
    const crossNote = el<HTMLElement>('.cross-note');
    const ctxIn = s.input.context;
    crossNote.hidden = !ctxIn;
    crossNote.textContent = ctxIn ? t('walk.cross.note', { T: s.input.tokens.length, S: ctxIn.tokens.length, query: s.input.tokens.join(' '), context: ctxIn.tokens.join(' ') }) : '';
    const H = s.derived.H;
    const picker = el<HTMLElement>('.head-picker');
    const pickerKey = step.perHead && H > 1 ? String(H) : '';
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
    el<HTMLElement>('.beat-caption').textContent =
      step.caption(ctx) || (resting ? t('walk.caption.resting', { s: Math.round(s.restMs / 1000) }) : '');
    try {
      step.render(stageHost, ctx);
    } catch (e) {
      failedDrawing(e);
    }
  }

  // The form is the source of the settings; the store only follows it.
  walkStore.subscribe((s) => render(s));
  walkStore.subscribe(followUrl);
  labStore.subscribe(followLab);
  followLab(labStore.get());
  render(walkStore.get());
  // A language switch redraws every text in place: the settings, the step, the head, the player
  // and the trace stay as they are.
  onLang(() => {
    translate(root);
    relabel();
    labKey = '';
    followLab(labStore.get());
    // The link's notices, while shown, are said again in the new language.
    if (urlNotices.length) urlNotices = walkFromUrl(openedAt).notices;
    renderedKey = '';
    render(walkStore.get());
    // An error in the old language (the settings' problems, the engine's refusal introduced in
    // words) is said again in the new one.
    if (walkStore.get().status === 'error') void compute(readForm());
  });
  return { start: () => compute(readForm()), pause };
}
