// The training lab view: settings (mirrored in the URL), train / pause / reset, live curves,
// attention maps of a fixed input, trying the model, checkpoint download and upload.
// Reads labStore; engine calls go through the engine worker (engine/training_engine.ts).
import type { EngineClient } from '../engine/client';
import type { EngineInfo, LabSettings, WorkerEvent } from '../engine/protocol';
import { renderHeatmap } from '../ui/heatmap_canvas';
import { sequentialScale } from '../util/color';
import { renderCurve } from './charts';
import { labProblems, settingsFromUrl, settingsToUrl, TASKS } from './settings';
import { labStore, type LabState } from './state';

const CHUNK = 1; // trainer steps per engine call: keeps pause responsive and curves smooth
const REFRESH_EVERY = 25; // steps between attention-map refreshes

const opt = (v: string | number, label: string | number = v) => `<option value="${v}">${label}</option>`;

export function mountLab(root: HTMLElement, engine: EngineClient) {
  root.innerHTML = `
  <div class="lab">
    <aside class="lab-side">
      <form class="settings lab-settings" autocomplete="off" onsubmit="return false">
        <label class="field wide">task <select name="task">${TASKS.map((t) => opt(t.id, t.label)).join('')}</select></label>
        <p class="task-what wide muted"></p>
        <label class="field">length <input name="length" type="number" min="2" max="32" /></label>
        <label class="field">symbols <input name="vocab" type="number" min="2" max="32" /></label>
        <label class="field">layers <select name="layers">${[1, 2, 3, 4].map((v) => opt(v)).join('')}</select></label>
        <label class="field">d_model <select name="dModel">${[16, 32, 48, 64, 128].map((v) => opt(v)).join('')}</select></label>
        <label class="field">heads <select name="heads">${[1, 2, 4, 8].map((v) => opt(v)).join('')}</select></label>
        <label class="field">K/V heads <select name="kvHeads">${[1, 2, 4, 8].map((v) => opt(v)).join('')}</select></label>
        <label class="field">positions <select name="positional">${opt('none')}${opt('sinusoidal')}${opt('learned')}${opt('rope', 'RoPE')}</select></label>
        <label class="field">norm <select name="norm">${opt('pre', 'Pre-LN')}${opt('post', 'Post-LN')}</select></label>
        <label class="field">learning rate <input name="lr" type="number" min="0.00001" max="0.5" step="0.0005" /></label>
        <label class="field">batch <select name="batch">${[8, 16, 32, 64].map((v) => opt(v)).join('')}</select></label>
        <label class="field">steps <input name="steps" type="number" min="1" max="100000" step="50" /></label>
        <label class="field">seed <input name="seed" type="number" min="0" max="99999" /></label>
        <label class="field check wide"><input name="scale" type="checkbox" /> scale scores by 1/√d_k</label>
        <p class="problems wide" role="alert"></p>
      </form>
      <div class="lab-buttons">
        <button type="button" data-act="train" class="primary">Train</button>
        <button type="button" data-act="pause">Pause</button>
        <button type="button" data-act="reset">Reset</button>
      </div>
      <div class="lab-io">
        <button type="button" data-act="save">Download checkpoint</button>
        <label class="file-btn">Load checkpoint<input type="file" name="checkpoint" accept=".safetensors,application/octet-stream" /></label>
      </div>
      <p class="muted small">The URL holds these settings and the seed: share it to reproduce a run.</p>
    </aside>
    <section class="lab-main">
      <div class="lab-banner" role="status"></div>
      <div class="lab-progress">
        <div class="progress"><div class="bar"></div></div>
        <span class="lab-stats"></span>
      </div>
      <div class="curves"></div>
      <h3>Attention maps of one example <span class="muted maps-note"></span></h3>
      <div class="lab-maps"></div>
      <h3>Try the model</h3>
      <form class="try" onsubmit="return false">
        <input name="prompt" type="text" spellcheck="false" />
        <button type="submit" data-act="try">Run</button>
        <span class="try-hint muted"></span>
      </form>
      <pre class="try-out"></pre>
    </section>
  </div>`;

  const el = <T extends Element>(sel: string) => root.querySelector<T>(sel)!;
  const form = el<HTMLFormElement>('form.lab-settings');

  const readForm = (): LabSettings => {
    const f = new FormData(form);
    const num = (k: string) => Number(f.get(k));
    return {
      task: f.get('task') as LabSettings['task'],
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
    };
  };
  const writeForm = (s: LabSettings) => {
    for (const [k, v] of Object.entries(s)) {
      const input = form.elements.namedItem(k) as HTMLInputElement | null;
      if (!input) continue;
      if (input.type === 'checkbox') input.checked = Boolean(v);
      else input.value = String(v);
    }
  };

  const initial = settingsFromUrl(new URL(location.href));
  labStore.set({ settings: initial });
  writeForm(initial);

  form.addEventListener('input', (ev) => {
    const t = ev.target as HTMLInputElement;
    if (t.name === 'heads') (form.elements.namedItem('kvHeads') as HTMLSelectElement).value = t.value;
    const settings = readForm();
    history.replaceState(null, '', settingsToUrl(settings, new URL(location.href)));
    const s = labStore.get();
    // Settings change the model: any previous run no longer matches them.
    if (s.phase !== 'unavailable') void resetRun(settings);
    else labStore.set({ settings });
  });

  async function resetRun(settings: LabSettings) {
    labStore.set({ settings, phase: labStore.get().phase === 'unavailable' ? 'unavailable' : 'idle', metrics: [], stepsPerSecond: 0, maps: null, tryOutput: null, message: null, startedAt: null });
    if (labStore.get().engine?.training) await engine.call('ok', { kind: 'lab.dispose' }).catch(() => undefined);
  }

  async function train() {
    const s = labStore.get();
    if (s.phase === 'unavailable' || s.phase === 'training') return;
    const problems = labProblems(s.settings);
    if (problems.length) {
      labStore.set({ message: problems.join(' ') });
      return;
    }
    try {
      if (s.phase === 'idle' || s.phase === 'done' || s.phase === 'error') {
        await engine.call('ok', { kind: 'lab.create', settings: s.settings, sample: [] }); // maps of the task's own example
        labStore.set({ metrics: [], maps: null });
      }
      labStore.set({ phase: 'training', message: null, startedAt: performance.now() });
      await engine.call('ok', { kind: 'lab.run', chunk: CHUNK, refreshEvery: REFRESH_EVERY });
    } catch (e) {
      labStore.set({ phase: 'error', message: (e as Error).message });
    }
  }

  // Metrics arrive in batches; the store coalesces updates into one render per frame.
  engine.onEvent((ev: WorkerEvent) => {
    const s = labStore.get();
    if (ev.event === 'lab.metrics') labStore.set({ metrics: s.metrics.concat(ev.metrics), stepsPerSecond: ev.stepsPerSecond });
    else if (ev.event === 'lab.maps') labStore.set({ maps: ev.maps, mapsStep: ev.step });
    else if (ev.event === 'lab.stopped')
      labStore.set({ phase: ev.reason === 'done' ? 'done' : ev.reason === 'paused' ? 'paused' : 'error', message: ev.message ?? s.message });
  });

  root.addEventListener('click', async (ev) => {
    const act = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-act]')?.dataset.act;
    if (!act) return;
    const s = labStore.get();
    if (act === 'train') void train();
    else if (act === 'pause' && s.phase === 'training') await engine.call('ok', { kind: 'lab.pause' });
    else if (act === 'reset') {
      if (s.phase === 'training') await engine.call('ok', { kind: 'lab.pause' });
      await resetRun(s.settings);
    } else if (act === 'save') {
      try {
        const r = await engine.call('save', { kind: 'lab.save' });
        const url = URL.createObjectURL(new Blob([r.bytes as BlobPart], { type: 'application/octet-stream' }));
        const a = Object.assign(document.createElement('a'), { href: url, download: `attnlab-${s.settings.task}-seed${s.settings.seed}.safetensors` });
        a.click();
        setTimeout(() => URL.revokeObjectURL(url), 1000);
      } catch (e) {
        labStore.set({ message: `Could not save: ${(e as Error).message}` });
      }
    } else if (act === 'try') {
      const text = (el<HTMLFormElement>('form.try').elements.namedItem('prompt') as HTMLInputElement).value;
      if (s.phase === 'idle' || s.phase === 'unavailable') {
        labStore.set({ tryOutput: 'Train a model (or load a checkpoint) first.' });
        return;
      }
      try {
        const r = (await engine.call('try', { kind: 'lab.try', text, maxNew: tryLength(s.settings) })).result;
        labStore.set({ tryOutput: tryText(s.settings, r) });
      } catch (e) {
        labStore.set({ tryOutput: `The engine could not read that: ${(e as Error).message}` });
      }
    }
  });

  el<HTMLInputElement>('input[name="checkpoint"]').addEventListener('change', async (ev) => {
    const input = ev.target as HTMLInputElement;
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    const bytes = new Uint8Array(await file.arrayBuffer());
    try {
      const r = await engine.call('loaded', { kind: 'lab.load', bytes, settings: labStore.get().settings }, [bytes.buffer]);
      writeForm(r.settings);
      history.replaceState(null, '', settingsToUrl(r.settings, new URL(location.href)));
      labStore.set({ settings: r.settings, phase: 'ready', metrics: [], stepsPerSecond: 0, maps: r.maps, mapsStep: 0, tryOutput: null, message: `Loaded ${file.name} (${r.settings.task}): try it below, or train it further.` });
    } catch (e) {
      labStore.set({ message: `“${file.name}” is not a checkpoint this lab can load: ${(e as Error).message}` });
    }
  });

  function tryHint(s: LabSettings) {
    switch (s.task) {
      case 'brackets':
        return `Type up to ${s.length} brackets from ${'()[]{}<>'.slice(0, 2 * s.vocab)}, e.g. ([]). The classifier says whether they balance.`;
      case 'copy':
      case 'reverse':
      case 'sort':
        return `Type ${s.length} symbols from 0…${s.vocab - 1}, separated by spaces, then | (the separator), e.g. ${exampleDigits(s)} |`;
      case 'assoc_recall':
        return `Type key–value pairs, | and a key, e.g. k1 v2 k0 v3 | k1 (keys k0…k${s.vocab - 1}, values v0…v${s.vocab - 1}).`;
      case 'char_lm':
        return 'Type the start of a sentence; the model continues it one character at a time.';
    }
  }

  const exampleDigits = (s: LabSettings) => Array.from({ length: s.length }, (_, i) => (3 * i + 1) % s.vocab).join(' ');
  const tryLength = (s: LabSettings) => (s.task === 'char_lm' ? 3 * s.length : s.task === 'assoc_recall' ? 1 : s.length);
  function tryText(s: LabSettings, r: { input: string; output: string | null; probabilities: number[] | null }) {
    if (r.probabilities) {
      const p = r.probabilities[1];
      return `${r.input}  →  ${p >= 0.5 ? 'balanced' : 'not balanced'} (p(balanced) = ${p.toFixed(3)})`;
    }
    return s.task === 'char_lm' ? `${r.input}▌${r.output}` : `${r.input}  →  ${r.output}`;
  }

  function render(s: LabState, prev?: LabState) {
    const banner = el<HTMLElement>('.lab-banner');
    const available = s.phase !== 'unavailable';
    root.classList.toggle('unavailable', !available);
    root.querySelectorAll<HTMLButtonElement>('.lab-buttons button, .lab-io button, form.try button').forEach((b) => (b.disabled = !available));
    el<HTMLInputElement>('input[name="checkpoint"]').disabled = !available;
    el<HTMLElement>('.task-what').textContent = TASKS.find((t) => t.id === s.settings.task)?.what ?? '';
    el<HTMLElement>('.try-hint').textContent = tryHint(s.settings);
    if (!s.engine && !s.engineError) banner.textContent = 'Loading the engine…';
    else if (s.engineError) banner.textContent = `The engine could not be loaded: ${s.engineError}`;
    else if (!available)
      banner.innerHTML = `<b>Training engine not available in this build.</b> The WebAssembly module loaded (${s.engine?.flavour}), but it has no ${s.engine?.trainingMissing.join(', ')} binding${(s.engine?.trainingMissing.length ?? 0) > 1 ? 's' : ''}. Nothing below is simulated: curves and maps appear only from a real engine.`;
    else banner.textContent = s.message ?? phaseText(s);
    banner.dataset.phase = s.phase;

    const done = s.metrics.length ? s.metrics[s.metrics.length - 1].step : 0;
    const total = s.settings.steps;
    el<HTMLElement>('.lab-progress .bar').style.width = `${Math.min(100, (done / total) * 100)}%`;
    const eta = s.stepsPerSecond > 0 && s.phase === 'training' ? (total - done) / s.stepsPerSecond : null;
    el<HTMLElement>('.lab-stats').textContent = `step ${done} / ${total}` + (s.stepsPerSecond ? ` · ${s.stepsPerSecond.toFixed(1)} steps/s` : '') + (eta != null ? ` · ETA ${formatEta(eta)}` : '');

    // Curves and maps redraw only when their data changed: metrics arrive ten times a second, and
    // re-joining every map cell (with its transition) each time costs long main-thread tasks.
    if (!prev || s.metrics !== prev.metrics || total !== prev.settings.steps) later('curves', renderCurves);
    if (!prev || s.maps !== prev.maps || s.mapsStep !== prev.mapsStep) later('maps', renderMaps);
    el<HTMLElement>('.try-out').textContent = s.tryOutput ?? '';
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
    const total = s.settings.steps;
    const loss = s.metrics.map((m) => ({ step: m.step, value: m.loss }));
    const acc = s.metrics.map((m) => ({ step: m.step, value: m.accuracy }));
    renderCurve(curves, 'loss', 'loss', loss, total, { log: true, color: '#542788' });
    renderCurve(curves, 'accuracy', 'accuracy', acc, total, { max: 1, color: '#e08214' });
  }

  /** One row of heads per layer; keys along the bottom, queries down the first head's side. */
  function renderMaps(s: LabState) {
    const maps = el<HTMLElement>('.lab-maps');
    el<HTMLElement>('.maps-note').textContent = !s.maps ? '' : s.mapsStep > 0 ? `(after step ${s.mapsStep}; refreshed while training)` : '(before any training in this session)';
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
          title: `layer ${l} · head ${h}`,
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

  labStore.subscribe(render);
  render(labStore.get());

  return {
    engineReady(info: EngineInfo) {
      labStore.set({ engine: info, phase: info.training ? 'idle' : 'unavailable' });
    },
    engineFailed(message: string) {
      labStore.set({ engineError: message, phase: 'unavailable' });
    },
  };
}

function phaseText(s: LabState): string {
  switch (s.phase) {
    case 'idle':
      return 'Choose a task and press Train. Training runs in a Web Worker, so the page stays responsive.';
    case 'ready':
      return 'Model ready.';
    case 'training':
      return 'Training…';
    case 'paused':
      return 'Paused. Train resumes; Reset starts over.';
    case 'done':
      return 'Done. Try the model below, or download the checkpoint.';
    case 'error':
      return 'Training stopped with an error.';
    default:
      return '';
  }
}

function formatEta(seconds: number) {
  if (!Number.isFinite(seconds)) return '—';
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.ceil(seconds % 60)} s`;
}
