// The lab's settings form: its fields (the engine switches of engine/protocol/switches.ts among
// them) and reading and writing LabSettings; what it shows of a state is form_render.ts. Changes
// go to the store through actions.changeSettings.
import { en } from '../i18n/en';
import { span, t, type Key } from '../i18n';
import type { LabSettings } from '../engine/protocol/lab';
import { TRAINING } from '../engine/protocol/limits';
import { ENGINE_SWITCHES, type EngineSwitchSettings } from '../engine/protocol/switches';
import { option } from '../ui/markup';
import * as actions from './actions';
import { renderFields, renderParameterCount, renderTextSource } from './form_render';
import { ARCHITECTURES, NORMS, POSITIONALS, TASKS, TEXT_CORPORA, withTask } from './settings';
import { pickFile } from './text_source';
import type { LabState } from './state';

/** The table key of a switch choice (lab.choice.<value>), or null where the engine's own spelling is shown. */
const choiceKey = (c: string | number): Key | null => (typeof c === 'string' && `lab.choice.${c}` in en ? (`lab.choice.${c}` as Key) : null);
/** A switch choice's option: in the page's words (following the language) when the tables name it. */
const choiceOption = (key: Key | null, c: string | number) => (key ? `<option value="${c}" data-i18n="${key}">${t(key)}</option>` : option(c));

/** A position's option: its name in the page's words (filled by relabel), RoPE as written. */
const POSITION_KEYS: Record<Exclude<(typeof POSITIONALS)[number], 'rope'>, Key> = { none: 'form.pos.none', sinusoidal: 'form.pos.sinusoidal', learned: 'lab.pos.learned' };
const positionOption = (p: (typeof POSITIONALS)[number]) => (p === 'rope' ? option(p, 'RoPE') : `<option value="${p}" data-i18n="${POSITION_KEYS[p]}"></option>`);
const NORM_LABELS: Record<(typeof NORMS)[number], string> = { pre: 'Pre-LN', post: 'Post-LN' };

export const formHtml = () => `
      <form class="settings lab-settings" autocomplete="off" novalidate onsubmit="return false">
        <label class="field wide">${span('lab.task')} <select name="task">${TASKS.map((x) => option(x.id)).join('')}</select></label>
        <p class="task-what wide muted"></p>
        <div class="text-source wide" hidden>
          <label class="field">${span('lab.text.corpus')} <select name="corpus">${TEXT_CORPORA.map((c) => `<option value="${c}" data-i18n="lab.text.corpus.${c}">${t(`lab.text.corpus.${c}`)}</option>`).join('')}</select></label>
          <label class="file-btn text-file" hidden>${span('lab.text.pick')}<input type="file" name="textFile" accept=".txt,text/plain" /></label>
          <p class="text-file-name muted small"></p>
          <p class="text-tokens muted small"></p>
          <div class="text-load" hidden><div class="open-progress"><div class="bar"></div></div><p class="text-load-note muted small"></p></div>
        </div>
        <label class="field wide">${span('lab.architecture')} <select name="architecture">${ARCHITECTURES.map((a) => option(a.id, a.label)).join('')}</select></label>
        <p class="arch-note wide muted small" hidden data-i18n="lab.lstmIgnores">${t('lab.lstmIgnores')}</p>
        <label class="field"><span data-label="length"></span> <input name="length" type="number" step="1" /></label>
        <label class="field" data-field="vocab"><span data-label="vocab"></span> <input name="vocab" type="number" step="1" /></label>
        <label class="field">${span('lab.layers')} <select name="layers">${[1, 2, 3, 4].map((v) => option(v)).join('')}</select></label>
        <label class="field">d_model <select name="dModel">${[16, 32, 48, 64, 128].map((v) => option(v)).join('')}</select></label>
        <label class="field">${span('form.heads')} <select name="heads">${[1, 2, 4, 8].map((v) => option(v)).join('')}</select></label>
        <label class="field">${span('form.kvHeads')} <select name="kvHeads">${[1, 2, 4, 8].map((v) => option(v)).join('')}</select></label>
        <label class="field">${span('form.positions')} <select name="positional">${POSITIONALS.map(positionOption).join('')}</select></label>
        <label class="field">${span('lab.norm')} <select name="norm">${NORMS.map((n) => option(n, NORM_LABELS[n])).join('')}</select></label>
        <label class="field">${span('lab.lr')} <input name="lr" type="number" min="${TRAINING.lr.min}" max="${TRAINING.lr.max}" step="0.0005" /></label>
        <label class="field">${span('lab.batch')} <select name="batch">${[8, 16, 32, 64].map((v) => option(v)).join('')}</select></label>
        <label class="field">${span('lab.steps')} <input name="steps" type="number" min="${TRAINING.steps.min}" max="${TRAINING.steps.max}" step="50" /></label>
        <label class="field">${span('form.seed')} <input name="seed" type="number" min="${TRAINING.seed.min}" max="${TRAINING.seed.max}" step="1" /></label>
        <label class="field check wide"><input name="scale" type="checkbox" /> ${span('lab.scale')}</label>
        <details class="engine-switches wide"><summary data-i18n="lab.switches">${t('lab.switches')}</summary>
          ${ENGINE_SWITCHES.map((w) =>
            w.choices === 'boolean'
              ? `<label class="field check"><input name="${w.key}" type="checkbox" /> ${span(`lab.switch.${w.key}` as const)}</label>`
              : `<label class="field">${span(`lab.switch.${w.key}` as const)} <select name="${w.key}">${w.choices.map((c) => choiceOption(w.key === 'warmup' && c === -1 ? 'lab.switch.warmupAuto' : choiceKey(c), c)).join('')}</select></label>`,
          ).join('')}
        </details>
        <p class="param-count wide muted small"></p>
        <ul class="problems wide" role="alert"></ul>
      </form>`;

export interface LabForm {
  /** The settings the form holds. */
  read(): LabSettings;
  /** Shows `s` (a checkpoint's value outside the choices gets its own option). */
  write(s: LabSettings): void;
  /** The task's ranges and labels, the problems, the fields in use; the parameter counts. */
  render(s: LabState, prev?: LabState): void;
  /** The task names in the page's language. */
  relabel(): void;
}

export function mountForm(form: HTMLFormElement): LabForm {
  const field = (k: string) => form.elements.namedItem(k) as HTMLInputElement | HTMLSelectElement | null;

  const read = (): LabSettings => {
    // Each element's own value: FormData would skip the disabled ones (an LSTM's Transformer-only
    // fields), and their values must survive a switch back to a Transformer.
    const get = (k: string) => field(k)?.value ?? null;
    // An empty or unreadable number field reads as NaN (not 0), so validation names it.
    const num = (k: string) => (String(get(k) ?? '').trim() === '' ? NaN : Number(get(k)));
    return {
      task: get('task') as LabSettings['task'],
      corpus: get('corpus') as LabSettings['corpus'],
      architecture: get('architecture') as LabSettings['architecture'],
      length: num('length'),
      vocab: num('vocab'),
      layers: num('layers'),
      dModel: num('dModel'),
      heads: num('heads'),
      kvHeads: num('kvHeads'),
      positional: get('positional') as LabSettings['positional'],
      norm: get('norm') as LabSettings['norm'],
      scale: (field('scale') as HTMLInputElement).checked,
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
      const input = field(w.key)!;
      if (w.choices === 'boolean') out[w.key] = (input as HTMLInputElement).checked;
      else out[w.key] = typeof w.default === 'number' ? Number(input.value) : input.value;
    }
    return out as EngineSwitchSettings;
  };
  const write = (s: LabSettings) => {
    for (const [k, v] of Object.entries(s)) {
      const input = field(k) as HTMLInputElement | null;
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

  // The reader's own text file: its bytes, for the engine to read (and refuse, naming why).
  const fileInput = field('textFile') as HTMLInputElement;
  fileInput.addEventListener('change', async () => {
    const file = fileInput.files?.[0];
    if (!file) return;
    try {
      pickFile(file.name, new Uint8Array(await file.arrayBuffer()));
    } catch (e) {
      actions.textFileUnreadable(file.name, e);
    }
  });

  form.addEventListener('input', (ev) => {
    const target = ev.target as HTMLInputElement;
    if (target.name === 'textFile') return; // read on 'change' above
    if (target.name === 'heads') field('kvHeads')!.value = target.value;
    let settings = read();
    // A task brings its own fields' meaning, ranges and the values it trains well with.
    if (target.name === 'task') {
      settings = withTask(settings, settings.task);
      write(settings);
    }
    actions.changeSettings(settings);
  });

  return {
    read,
    write,
    render(s, prev) {
      // The form changes with settings and phases, not with each metrics batch.
      if (!prev || s.settings !== prev.settings || s.phase !== prev.phase) renderFields(form, s);
      if (!prev || s.formParameters !== prev.formParameters || s.model !== prev.model) renderParameterCount(form, s);
      if (!prev || s.settings !== prev.settings || s.textLoad !== prev.textLoad || s.textFile !== prev.textFile) renderTextSource(form, s);
    },
    relabel() {
      for (const o of Array.from((field('task') as HTMLSelectElement).options)) o.textContent = TASKS.find((x) => x.id === o.value)?.label() ?? o.value;
    },
  };
}
