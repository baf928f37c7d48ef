// The training lab view: settings (mirrored in the URL), train / pause / reset, live curves,
// attention maps of a fixed input, trying the model, checkpoint download and upload.
// Renders labStore; every engine call and store change is an action (lab/actions.ts).
import type { LabSettings, StepMetrics, TryResult } from '../engine/protocol/lab';
import { ENGINE_SWITCHES, type EngineSwitchSettings } from '../engine/protocol/switches';
import { renderHeatmap } from '../ui/heatmap_canvas';
import { sequentialScale } from '../util/color';
import * as actions from './actions';
import { linkCharts, renderCurve, renderSeries } from './charts';
import { renderTrainingCurves } from './curves';
import { mountCompare, renderCompare } from './compare';
import { mountHeadView, renderHeadView, type HeadViewState } from './head_view';
import { mountPicture, renderPicture, type PicturePick } from './picture';
import { attr, onLang, span, t as tr, translate, type Key } from '../i18n';
import { en } from '../i18n/en';
import { taskLimits, TRAINING } from '../engine/protocol/limits';
import { ARCHITECTURES, labProblems, rangeLabel, settingsChange, settingsFromUrl, taskArchitectures, TASKS, TRANSFORMER_ONLY, withTask } from './settings';
import { labStore, type LabState } from './state';
import { tryHint } from './try_input';

const opt = (v: string | number, label: string | number = v) => `<option value="${v}">${label}</option>`;
/** The table key of a switch choice (lab.choice.<value>), or null where the engine's own spelling is shown. */
const choiceKey = (c: string | number): Key | null => (typeof c === 'string' && `lab.choice.${c}` in en ? (`lab.choice.${c}` as Key) : null);
/** A switch choice's option: in the page's words (following the language) when the tables name it. */
const choiceOption = (key: Key | null, c: string | number) => (key ? `<option value="${c}" data-i18n="${key}">${tr(key)}</option>` : opt(c));

export function mountLab(root: HTMLElement) {
  root.innerHTML = `
  <div class="lab">
    <aside class="lab-side">
      <form class="settings lab-settings" autocomplete="off" novalidate onsubmit="return false">
        <label class="field wide">${span('lab.task')} <select name="task">${TASKS.map((t) => opt(t.id)).join('')}</select></label>
        <p class="task-what wide muted"></p>
        <label class="field wide">${span('lab.architecture')} <select name="architecture">${ARCHITECTURES.map((a) => opt(a.id, a.label)).join('')}</select></label>
        <p class="arch-note wide muted small" hidden data-i18n="lab.lstmIgnores">${tr('lab.lstmIgnores')}</p>
        <label class="field"><span data-label="length"></span> <input name="length" type="number" step="1" /></label>
        <label class="field" data-field="vocab"><span data-label="vocab"></span> <input name="vocab" type="number" step="1" /></label>
        <label class="field">${span('lab.layers')} <select name="layers">${[1, 2, 3, 4].map((v) => opt(v)).join('')}</select></label>
        <label class="field">d_model <select name="dModel">${[16, 32, 48, 64, 128].map((v) => opt(v)).join('')}</select></label>
        <label class="field">${span('walk.heads')} <select name="heads">${[1, 2, 4, 8].map((v) => opt(v)).join('')}</select></label>
        <label class="field">${span('walk.kvHeads')} <select name="kvHeads">${[1, 2, 4, 8].map((v) => opt(v)).join('')}</select></label>
        <label class="field">${span('walk.positions')} <select name="positional"><option value="none" data-i18n="walk.pos.none"></option><option value="sinusoidal" data-i18n="walk.pos.sinusoidal"></option><option value="learned" data-i18n="lab.pos.learned"></option>${opt('rope', 'RoPE')}</select></label>
        <label class="field">${span('lab.norm')} <select name="norm">${opt('pre', 'Pre-LN')}${opt('post', 'Post-LN')}</select></label>
        <label class="field">${span('lab.lr')} <input name="lr" type="number" min="${TRAINING.lr.min}" max="${TRAINING.lr.max}" step="0.0005" /></label>
        <label class="field">${span('lab.batch')} <select name="batch">${[8, 16, 32, 64].map((v) => opt(v)).join('')}</select></label>
        <label class="field">${span('lab.steps')} <input name="steps" type="number" min="${TRAINING.steps.min}" max="${TRAINING.steps.max}" step="50" /></label>
        <label class="field">${span('walk.seed')} <input name="seed" type="number" min="${TRAINING.seed.min}" max="${TRAINING.seed.max}" step="1" /></label>
        <label class="field check wide"><input name="scale" type="checkbox" /> ${span('lab.scale')}</label>
        <details class="engine-switches wide"><summary data-i18n="lab.switches">${tr('lab.switches')}</summary>
          ${ENGINE_SWITCHES.map((w) =>
            w.choices === 'boolean'
              ? `<label class="field check"><input name="${w.key}" type="checkbox" /> ${span(`lab.switch.${w.key}` as const)}</label>`
              : `<label class="field">${span(`lab.switch.${w.key}` as const)} <select name="${w.key}">${w.choices.map((c) => choiceOption(w.key === 'warmup' && c === -1 ? 'lab.switch.warmupAuto' : choiceKey(c), c)).join('')}</select></label>`,
          ).join('')}
        </details>
        <p class="param-count wide muted small"></p>
        <ul class="problems wide" role="alert"></ul>
      </form>
      <div class="lab-buttons">
        <button type="button" data-act="train" class="primary">${tr('lab.train')}</button>
        <button type="button" data-act="pause" data-i18n="lab.pause">${tr('lab.pause')}</button>
        <button type="button" data-act="reset" data-i18n="lab.reset">${tr('lab.reset')}</button>
      </div>
      <div class="lab-io">
        <button type="button" data-act="save" data-i18n="lab.save">${tr('lab.save')}</button>
        <label class="file-btn">${span('lab.load')}<input type="file" name="checkpoint" accept=".safetensors,application/octet-stream" /></label>
      </div>
      <p class="muted small" data-i18n="lab.urlNote">${tr('lab.urlNote')}</p>
    </aside>
    <section class="lab-main">
      <div class="lab-banner" role="status"><span class="text"></span><span class="actions"></span><details class="details" hidden><summary data-i18n="lab.details">${tr('lab.details')}</summary><pre></pre></details></div>
      <div class="lab-progress">
        <div class="progress"><div class="bar"></div></div>
        <span class="lab-stats"></span>
      </div>
      <div class="curves"></div>
      <section class="compare"></section>
      <section class="lab-picture" hidden></section>
      <h3>${span('lab.maps')} <span class="muted maps-note"></span></h3>
      <p class="maps-none muted" hidden></p>
      <div class="lab-maps-row"><div class="lab-maps"></div><section class="head-view" hidden ${attr('aria-label', 'lab.headView.title')}></section></div>
      <h3 data-i18n="lab.try">${tr('lab.try')}</h3>
      <form class="try" onsubmit="return false">
        <input name="prompt" type="text" spellcheck="false" />
        <button type="submit" data-act="try" data-i18n="lab.run">${tr('lab.run')}</button>
        <span class="try-hint muted"></span>
      </form>
      <pre class="try-out"></pre>
    </section>
  </div>`;

  const el = <T extends Element>(sel: string) => root.querySelector<T>(sel)!;
  const form = el<HTMLFormElement>('form.lab-settings');
  mountCompare(el<HTMLElement>('section.compare'));
  let headPick: HeadViewState = { layer: 0, head: 0 };
  mountHeadView(el<HTMLElement>('section.head-view'), (pick) => {
    headPick = pick;
    renderHeadView(el<HTMLElement>('section.head-view'), labStore.get().maps, headPick);
  });
  let picturePick: PicturePick = { layer: 0, head: 0, query: null };
  mountPicture(el<HTMLElement>('section.lab-picture'), (change) => {
    picturePick = { ...picturePick, ...change };
    renderPicture(el<HTMLElement>('section.lab-picture'), labStore.get().picture, picturePick);
  });

  const readForm = (): LabSettings => {
    // Each element's own value: FormData would skip the disabled ones (an LSTM's Transformer-only
    // fields), and their values must survive a switch back to a Transformer.
    const f = { get: (k: string) => (form.elements.namedItem(k) as HTMLInputElement | HTMLSelectElement | null)?.value ?? null };
    // An empty or unreadable number field reads as NaN (not 0), so validation names it.
    const num = (k: string) => (String(f.get(k) ?? '').trim() === '' ? NaN : Number(f.get(k)));
    return {
      task: f.get('task') as LabSettings['task'],
      architecture: f.get('architecture') as LabSettings['architecture'],
      length: num('length'),
      vocab: num('vocab'),
      layers: num('layers'),
      dModel: num('dModel'),
      heads: num('heads'),
      kvHeads: num('kvHeads'),
      positional: f.get('positional') as LabSettings['positional'],
      norm: f.get('norm') as LabSettings['norm'],
      scale: (form.elements.namedItem('scale') as HTMLInputElement).checked,
      lr: num('lr'),
      batch: num('batch'),
      steps: num('steps'),
      seed: num('seed'),
      ...readSwitches(),
    };
  };
  /** The engine switches as the form holds them, typed as their table says (engine/protocol/switches.ts). */
  const readSwitches = (): EngineSwitchSettings => {
    const out: Record<string, unknown> = {};
    for (const w of ENGINE_SWITCHES) {
      const input = form.elements.namedItem(w.key) as HTMLInputElement | HTMLSelectElement;
      if (w.choices === 'boolean') out[w.key] = (input as HTMLInputElement).checked;
      else out[w.key] = typeof w.default === 'number' ? Number(input.value) : input.value;
    }
    return out as EngineSwitchSettings;
  };
  const writeForm = (s: LabSettings) => {
    for (const [k, v] of Object.entries(s)) {
      const input = form.elements.namedItem(k) as HTMLInputElement | null;
      if (!input) continue;
      if (input.type === 'checkbox') input.checked = Boolean(v);
      else {
        const value = Number.isNaN(v) ? '' : String(v);
        // A checkpoint's value outside the form's choices (e.g. 6 layers) gets its own option, so the control shows it.
        if (input instanceof HTMLSelectElement && value !== '' && !Array.from(input.options).some((o) => o.value === value)) input.add(new Option(value, value));
        input.value = value;
      }
    }
  };

  const initial = settingsFromUrl(new URL(location.href));
  actions.restore(initial);
  writeForm(initial);

  form.addEventListener('input', (ev) => {
    const t = ev.target as HTMLInputElement;
    if (t.name === 'heads') (form.elements.namedItem('kvHeads') as HTMLSelectElement).value = t.value;
    let settings = readForm();
    // A task brings its own fields' meaning, ranges and the values it trains well with.
    if (t.name === 'task') {
      settings = withTask(settings, settings.task);
      writeForm(settings);
    }
    actions.changeSettings(settings);
  });

  root.addEventListener('click', async (ev) => {
    const act = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-act]')?.dataset.act;
    if (!act) return;
    if (act === 'train') void actions.train();
    else if (act === 'pause') await actions.pause();
    else if (act === 'reset') await actions.reset();
    else if (act === 'keep') {
      const s = actions.keepModel();
      if (s) writeForm(s);
    } else if (act === 'long-run') await actions.confirmLongRun();
    else if (act === 'save') {
      const r = await actions.save();
      if (!r) return;
      const url = URL.createObjectURL(new Blob([r.bytes as BlobPart], { type: 'application/octet-stream' }));
      Object.assign(document.createElement('a'), { href: url, download: r.filename }).click();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    } else if (act === 'try') {
      const text = (el<HTMLFormElement>('form.try').elements.namedItem('prompt') as HTMLInputElement).value;
      await actions.tryModel(text, tryText, tryLength);
    } else if (act === 'variant-scale' || act === 'variant-norm') {
      // One click: the same settings with one switch flipped, trained from scratch (a new model).
      const s = labStore.get().settings;
      const settings = act === 'variant-scale' ? { ...s, scale: !s.scale } : { ...s, norm: s.norm === 'pre' ? ('post' as const) : ('pre' as const) };
      writeForm(settings);
      actions.changeSettings(settings);
      void actions.train();
    } else if (act === 'runs-clear') actions.clearRuns();
  });
  el<HTMLElement>('section.compare').addEventListener('change', (ev) => {
    const id = (ev.target as HTMLInputElement).dataset.compare;
    if (id) actions.toggleCompare(Number(id));
  });

  el<HTMLInputElement>('input[name="checkpoint"]').addEventListener('change', async (ev) => {
    const input = ev.target as HTMLInputElement;
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await file.arrayBuffer());
    } catch (e) {
      actions.checkpointFileUnreadable(file.name, e);
      return;
    }
    const settings = await actions.loadCheckpoint(file.name, bytes);
    if (settings) writeForm(settings);
  });

  // Tokens to generate: the answer of a prompt/answer task, one value for recall, a window of text for char-LM.
  const tryLength = (s: LabSettings) => (s.task === 'assoc_recall' ? 1 : s.length);
  function tryText(s: LabSettings, r: TryResult) {
    if (r.probabilities) {
      const p = r.probabilities[1];
      return `${r.input}  →  ${tr(p >= 0.5 ? 'lab.balanced' : 'lab.notBalanced')} (p(${tr('lab.balanced')}) = ${p.toFixed(3)})`;
    }
    return s.task === 'char_lm' ? `${r.input}▌${r.output}` : `${r.input}  →  ${r.output}`;
  }

  /** The per-task labels and ranges of the task-dependent fields. */
  function renderFields(s: LabState) {
    const t = taskLimits(s.settings.task);
    el<HTMLElement>('[data-label="length"]').textContent = rangeLabel(t.length);
    Object.assign(el<HTMLInputElement>('input[name="length"]'), { min: String(t.length.min), max: String(t.length.max) });
    el<HTMLElement>('[data-field="vocab"]').hidden = !t.vocab;
    if (t.vocab) {
      el<HTMLElement>('[data-label="vocab"]').textContent = rangeLabel(t.vocab);
      Object.assign(el<HTMLInputElement>('input[name="vocab"]'), { min: String(t.vocab.min), max: String(t.vocab.max) });
    }
    const problems = labProblems(s.settings);
    for (const input of form.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input, select'))
      input.setAttribute('aria-invalid', String(problems.some((p) => p.field === input.name)));
    const list = el<HTMLElement>('.problems');
    list.replaceChildren(...problems.map((p) => Object.assign(document.createElement('li'), { textContent: p.message })));
    // While a run trains, its settings are fixed: pause to change them. An LSTM's form keeps the
    // Transformer-only fields (switching back restores them) but disables them, saying why.
    const lstm = s.settings.architecture === 'lstm';
    // An image model sets its own positions (a ViT learns one per patch, a Swin reads them from its windows).
    const image = s.settings.task === 'shapes';
    for (const input of form.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input, select')) {
      const unusedByImage = image && input.name === 'positional';
      const unused = (lstm && TRANSFORMER_ONLY.includes(input.name as keyof LabSettings)) || unusedByImage;
      input.disabled = s.phase === 'training' || unused;
      input.closest('label')?.classList.toggle('unused', unused);
      if (unused) input.closest('label')!.title = tr(unusedByImage ? 'lab.imagePositions' : 'lab.transformerOnly');
      else input.closest('label')?.removeAttribute('title');
    }
    el<HTMLElement>('.arch-note').hidden = !lstm;
    // The architectures the task trains (images: ViT or Swin; sequences: Transformer or LSTM).
    const archs = taskArchitectures(s.settings.task);
    for (const o of Array.from((form.elements.namedItem('architecture') as HTMLSelectElement).options)) o.disabled = !archs.includes(o.value as LabSettings['architecture']);
  }

  /** The engine's parameter count of the form's model, and of the model held (they differ once the form changed). */
  function renderParameterCount(s: LabState) {
    const arch = (a: LabSettings['architecture']) => ARCHITECTURES.find((x) => x.id === a)?.label ?? a;
    const form = s.formParameters ? tr('lab.params.form', { arch: arch(s.formParameters.architecture), n: formatCount(s.formParameters.count) }) : '';
    const held = s.model ? tr('lab.params.held', { arch: arch(s.model.settings.architecture), n: formatCount(s.model.parameters) }) : '';
    el<HTMLElement>('.param-count').textContent = [form, held].filter(Boolean).join(' · ');
  }

  /** What the banner says, and which buttons it offers. */
  function renderBanner(s: LabState) {
    const banner = el<HTMLElement>('.lab-banner');
    const text = banner.querySelector<HTMLElement>('.text')!;
    const acts = banner.querySelector<HTMLElement>('.actions')!;
    const details = banner.querySelector<HTMLDetailsElement>('.details')!;
    const button = (act: string, label: string) => `<button type="button" data-act="${act}">${label}</button>`;
    let kind = s.phase as string;
    let actionsHtml = '';
    let detail: string | null = null;
    if (!s.engine && !s.engineError) text.textContent = tr('walk.status.loading');
    else if (s.engineError) text.textContent = tr('page.engineLoadFailed', { message: s.engineError });
    else if (s.phase === 'unavailable') {
      text.innerHTML = tr('lab.unavailable', { flavour: s.engine?.flavour ?? '', missing: s.engine?.trainingMissing.join(', ') ?? '' });
    } else if (s.error) {
      kind = 'error';
      text.textContent = s.error.text;
      detail = s.error.details;
    } else if (s.longRun) {
      kind = 'warning';
      text.textContent = tr('lab.longRun', { eta: formatEta(s.longRun.seconds), rate: s.longRun.stepsPerSecond.toFixed(1) });
      actionsHtml = button('long-run', tr('lab.longRun.anyway', { eta: formatEta(s.longRun.seconds) }));
    } else if (s.model && s.phase !== 'training' && settingsChange(s.model.settings, s.settings) === 'model') {
      kind = 'warning';
      const done = lastStep(s);
      text.textContent = done ? tr('lab.newModel.trained', { done }) : tr('lab.newModel');
      actionsHtml = button('keep', tr('lab.keep'));
    } else if (s.model && s.phase !== 'training' && settingsChange(s.model.settings, s.settings) === 'training') {
      text.textContent = tr('lab.continue', { steps: s.settings.steps, lr: s.settings.lr, batch: s.settings.batch });
    } else text.textContent = s.message ?? phaseText(s);
    acts.innerHTML = actionsHtml;
    details.hidden = !detail;
    details.querySelector('pre')!.textContent = detail ?? '';
    banner.dataset.phase = s.phase;
    banner.dataset.kind = kind;
  }

  function render(s: LabState, prev?: LabState) {
    const available = s.phase !== 'unavailable';
    root.classList.toggle('unavailable', !available);
    root.querySelectorAll<HTMLButtonElement>('.lab-buttons button, .lab-io button, form.try button').forEach((b) => (b.disabled = !available));
    el<HTMLInputElement>('input[name="checkpoint"]').disabled = !available;
    const trainButton = el<HTMLButtonElement>('button[data-act="train"]');
    const change = s.model ? settingsChange(s.model.settings, s.settings) : 'model';
    trainButton.textContent =
      s.phase === 'paused' && change === 'none' ? tr('lab.resume') : s.model && change !== 'model' && s.phase !== 'error' && s.phase !== 'ready' ? tr('lab.trainMore', { n: s.settings.steps }) : tr('lab.train');
    el<HTMLElement>('.task-what').textContent = TASKS.find((t) => t.id === s.settings.task)?.what() ?? '';
    el<HTMLElement>('.try-hint').textContent = s.model ? tryHint(s.model.settings) : tr('lab.tryFirst');
    const tokens = s.model?.task.kind !== 'regression' && s.model?.settings.task !== 'shapes';
    el<HTMLInputElement>('form.try input[name="prompt"]').disabled = !s.model || !tokens;
    el<HTMLButtonElement>('form.try button').disabled = !s.model || !tokens;
    // The form and the banner change with settings and phases, not with each metrics batch.
    const changed = (k: keyof LabState) => !prev || s[k] !== prev[k];
    if (changed('settings') || changed('phase')) renderFields(s);
    if (changed('formParameters') || changed('model')) renderParameterCount(s);
    if (['settings', 'phase', 'model', 'error', 'longRun', 'message', 'engine', 'engineError'].some((k) => changed(k as keyof LabState))) renderBanner(s);

    const done = lastStep(s);
    const total = actions.runTarget(s);
    el<HTMLElement>('.lab-progress .bar').style.width = `${Math.min(100, (done / Math.max(1, total)) * 100)}%`;
    const eta = s.stepsPerSecond > 0 && s.phase === 'training' ? (total - done) / s.stepsPerSecond : null;
    // A total from an invalid steps field (the form names the problem) is not shown.
    el<HTMLElement>('.lab-stats').textContent =
      tr('lab.stats.step', { done, total: Number.isInteger(total) && total > 0 ? ` / ${total}` : '' }) +
      (s.stepsPerSecond ? ` · ${tr('lab.stats.rate', { rate: s.stepsPerSecond.toFixed(1) })}` : '') +
      (eta != null ? ` · ${tr('lab.stats.eta', { eta: formatEta(eta) })}` : '');

    // Curves and maps redraw only when their data changed: metrics arrive ten times a second, and
    // re-joining every map cell (with its transition) each time costs long main-thread tasks.
    if (!prev || s.metrics !== prev.metrics || total !== actions.runTarget(prev)) later('curves', renderCurves);
    if (!prev || s.runs !== prev.runs || s.compare !== prev.compare || changed('phase') || changed('settings')) later('compare', (st) => renderCompare(el<HTMLElement>('section.compare'), st));
    if (!prev || s.maps !== prev.maps || s.mapsStep !== prev.mapsStep || changed('model') || changed('settings')) later('maps', renderMaps);
    if (!prev || s.picture !== prev.picture) later('picture', (st) => renderPicture(el<HTMLElement>('section.lab-picture'), st.picture, picturePick));
    const out = el<HTMLElement>('.try-out');
    out.textContent = s.tryOutput?.text ?? '';
    out.classList.toggle('error', Boolean(s.tryOutput?.error));
  }

  // Curves and maps are drawn outside the store's frame, each in its own task (maps one layer per
  // task), so that no single main-thread task adds them all up (the long-task budget is 50 ms on a
  // busy laptop). Each draws the latest state when its task runs.
  const queued = new Set<string>();
  function later(what: string, draw: (s: LabState) => void) {
    if (queued.has(what)) return;
    queued.add(what);
    setTimeout(() => {
      queued.delete(what);
      draw(labStore.get());
    }, 0);
  }

  function renderCurves(s: LabState) {
    const curves = el<HTMLElement>('.curves');
    const total = actions.runTarget(s);
    const loss = s.metrics.map((m) => ({ step: m.step, value: m.loss }));
    const acc = s.metrics.map((m) => ({ step: m.step, value: m.accuracy }));
    const series = (s.model?.settings ?? s.settings).task === 'series';
    if (series) {
      // A forecaster reports MSE (its loss) and MAE, each beside the seasonal-naive baseline on the same batch.
      const baseline = (f: (m: StepMetrics) => number | undefined) => ({ label: tr('lab.baseline'), color: '#8c8c8c', dashed: true, points: s.metrics.map((m) => ({ step: m.step, value: f(m) ?? NaN })) });
      curves.querySelector('figure[data-curve="accuracy"]')?.remove();
      renderSeries(curves, 'loss', tr('lab.mse'), [{ label: tr('lab.mse'), color: '#542788', points: loss }, baseline((m) => m.baselineMse)], total, { log: true });
      renderSeries(curves, 'mae', tr('lab.mae'), [{ label: tr('lab.mae'), color: '#e08214', points: s.metrics.map((m) => ({ step: m.step, value: m.mae ?? NaN })) }, baseline((m) => m.baselineMae)], total, {});
    } else {
      curves.querySelector('figure[data-curve="mae"]')?.remove();
      renderCurve(curves, 'loss', tr('lab.loss'), loss, total, { log: true, color: '#542788' });
      renderCurve(curves, 'accuracy', tr('lab.accuracy'), acc, total, { max: 1, color: '#e08214' });
    }
    renderTrainingCurves(curves, s.metrics, s.model?.settings ?? s.settings, total);
  }

  /** One row of heads per layer; keys along the bottom, queries down the first head's side. */
  function renderMaps(s: LabState) {
    const maps = el<HTMLElement>('.lab-maps');
    // The held model decides; before there is one, the form's architecture does.
    const held = s.model?.settings ?? s.settings;
    const lstm = held.architecture === 'lstm';
    // Shapes draw their attention over the images in the picture above; a forecaster's maps are over its context steps.
    const pictured = held.task === 'shapes';
    el<HTMLElement>('.maps-none').hidden = !lstm && !pictured;
    el<HTMLElement>('.maps-none').textContent = tr(lstm ? 'lab.mapsNone' : 'lab.mapsPicture');
    if (lstm || pictured) {
      el<HTMLElement>('section.head-view').hidden = true;
      el<HTMLElement>('.maps-note').textContent = '';
      maps.replaceChildren();
      delete maps.dataset.geometry;
      return;
    }
    el<HTMLElement>('.maps-note').textContent = !s.maps ? '' : s.mapsStep > 0 ? tr('lab.maps.after', { step: s.mapsStep }) : tr('lab.maps.before');
    renderHeadView(el<HTMLElement>('section.head-view'), s.maps, headPick);
    if (!s.maps) {
      maps.replaceChildren();
      delete maps.dataset.geometry;
      return;
    }
    const [L, H, T] = s.maps.shape;
    const geometry = `${L}x${H}x${T}`;
    if (maps.dataset.geometry !== geometry) {
      maps.replaceChildren(
        ...Array.from({ length: L }, (_, l) => {
          const row = document.createElement('div');
          row.className = 'lab-layer';
          row.dataset.layer = String(l);
          return row;
        }),
      );
      maps.dataset.geometry = geometry;
    }
    const labels = s.maps.labels.map((l) => (l === ' ' ? '␣' : l === '\n' ? '↵' : l));
    const cell = Math.max(7, Math.min(18, Math.floor(((maps.clientWidth || 900) - 48 * H) / (H * T))));
    const maps_ = s.maps;
    const drawLayer = (l: number) => {
      const row = maps.querySelector<HTMLElement>(`.lab-layer[data-layer="${l}"]`);
      if (!row || labStore.get().maps !== maps_) return; // replaced meanwhile: the newer maps draw themselves
      for (let h = 0; h < H; h++) {
        const off = (l * H + h) * T * T;
        renderHeatmap(row, {
          name: `lab-map-l${l}-h${h}`,
          title: tr('lab.maps.title', { l, h }),
          data: { shape: [T, T], data: maps_.data.subarray(off, off + T * T) },
          scale: sequentialScale(1),
          cell,
          rowLabels: h === 0 ? labels : undefined,
          colLabels: labels,
        });
      }
      if (l + 1 < L) setTimeout(() => drawLayer(l + 1), 0);
    };
    drawLayer(0);
  }

  linkCharts(el<HTMLElement>('.curves'));
  // Charts take their host's width: redraw them when it changes (e.g. the lab tab is shown).
  let curvesWidth = 0;
  new ResizeObserver(() => {
    const w = el<HTMLElement>('.curves').clientWidth;
    if (w !== curvesWidth) later('curves', renderCurves);
    curvesWidth = w;
  }).observe(el<HTMLElement>('.curves'));

  labStore.subscribe(render);
  /** The texts that follow the language and are not drawn by render: task names in the select. */
  const relabel = () => {
    for (const o of Array.from((form.elements.namedItem('task') as HTMLSelectElement).options)) o.textContent = TASKS.find((x) => x.id === o.value)?.label() ?? o.value;
  };
  relabel();
  translate(root);
  render(labStore.get());
  // A language switch redraws every text; the settings, the model and a running training stay.
  onLang(() => {
    translate(root);
    relabel();
    render(labStore.get());
    later('curves', renderCurves);
  });

}

const lastStep = (s: LabState) => (s.metrics.length ? s.metrics[s.metrics.length - 1].step : 0);

function phaseText(s: LabState): string {
  switch (s.phase) {
    case 'idle':
      return tr('lab.phase.idle');
    case 'ready':
      return tr('lab.phase.ready');
    case 'training':
      return tr('lab.phase.training');
    case 'paused':
      return tr('lab.phase.paused');
    case 'done':
      return tr('lab.phase.done', { n: s.settings.steps });
    case 'error':
      return tr('lab.phase.error');
    default:
      return '';
  }
}

const formatCount = (n: number) => n.toLocaleString('en-US');

function formatEta(seconds: number) {
  if (!Number.isFinite(seconds)) return '—';
  if (seconds < 60) return tr('lab.eta.s', { s: Math.ceil(seconds) });
  if (seconds < 3600) return tr('lab.eta.min', { m: Math.floor(seconds / 60), s: Math.floor(seconds % 60) });
  return tr('lab.eta.h', { h: Math.floor(seconds / 3600), m: Math.floor((seconds % 3600) / 60) });
}
