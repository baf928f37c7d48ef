// The training lab view: settings (mirrored in the URL), train / pause / reset, live curves,
// attention maps of a fixed input, trying the model, checkpoint download and upload.
// Renders labStore; every engine call and store change is an action (lab/actions.ts).
import type { LabSettings } from '../engine/protocol';
import { renderHeatmap } from '../ui/heatmap_canvas';
import { sequentialScale } from '../util/color';
import * as actions from './actions';
import { renderCurve } from './charts';
import { settingsFromUrl, TASKS } from './settings';
import { labStore, type LabState } from './state';

const opt = (v: string | number, label: string | number = v) => `<option value="${v}">${label}</option>`;

export function mountLab(root: HTMLElement) {
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
  actions.restore(initial);
  writeForm(initial);

  form.addEventListener('input', (ev) => {
    const t = ev.target as HTMLInputElement;
    if (t.name === 'heads') (form.elements.namedItem('kvHeads') as HTMLSelectElement).value = t.value;
    void actions.changeSettings(readForm());
  });

  root.addEventListener('click', async (ev) => {
    const act = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-act]')?.dataset.act;
    if (!act) return;
    const s = labStore.get();
    if (act === 'train') void actions.train();
    else if (act === 'pause') await actions.pause();
    else if (act === 'reset') await actions.reset();
    else if (act === 'save') {
      const r = await actions.save();
      if (!r) return;
      const url = URL.createObjectURL(new Blob([r.bytes as BlobPart], { type: 'application/octet-stream' }));
      Object.assign(document.createElement('a'), { href: url, download: r.filename }).click();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    } else if (act === 'try') {
      const text = (el<HTMLFormElement>('form.try').elements.namedItem('prompt') as HTMLInputElement).value;
      await actions.tryModel(text, tryLength(s.settings), (r) => tryText(s.settings, r));
    }
  });

  el<HTMLInputElement>('input[name="checkpoint"]').addEventListener('change', async (ev) => {
    const input = ev.target as HTMLInputElement;
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    const settings = await actions.loadCheckpoint(file.name, new Uint8Array(await file.arrayBuffer()));
    if (settings) writeForm(settings);
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
