// "Trained in the lab" in the walkthrough's form: offered once the lab holds a model (the one it
// trains or loaded), with that model's layers and task; the walkthrough traces it again when it
// changes, and falls back to random weights when it goes.
import { t } from '../i18n';
import { taskLabel } from '../lab/settings';
import type { LabState } from '../lab/state';
import { option } from '../ui/markup';
import { compute } from './actions';
import type { WalkSettings } from './inputs';
import { walkStore } from './state';

/** The function that follows the lab's state; `force` shows it again (a language switch). */
export function followLabModel(form: HTMLFormElement, read: () => WalkSettings, showModelFields: (model: WalkSettings['model']) => void): (l: LabState, force?: boolean) => void {
  const modelSelect = form.elements.namedItem('model') as HTMLSelectElement;
  const layerSelect = form.elements.namedItem('layer') as HTMLSelectElement;
  // While training runs the model exists but changes every step: it is offered, and traced again when training stops.
  const hasModel = (l: LabState) => l.phase === 'ready' || l.phase === 'training' || l.phase === 'paused' || l.phase === 'done';
  let labKey = '';
  return (l: LabState, force = false) => {
    const available = hasModel(l);
    const key = `${available}|${l.phase === 'training' ? 'training' : `${l.phase}|${l.metrics.length}`}|${l.settings.layers}|${l.settings.task}`;
    if (key === labKey && !force) return;
    labKey = key;
    const trained = modelSelect.options[1];
    trained.disabled = !available;
    trained.textContent = available ? t('walk.model.trained', { task: taskLabel(l.settings.task) }) : t('walk.model.trainedNone');
    const layer = Math.min(Number(layerSelect.value) || 0, l.settings.layers - 1);
    layerSelect.innerHTML = Array.from({ length: l.settings.layers }, (_, i) => option(i, t('walk.layer.n', { n: i }))).join('');
    layerSelect.value = String(layer);
    form.querySelector<HTMLElement>('.model-hint')!.textContent = t('walk.input.hint', { task: taskLabel(l.settings.task) });
    if (!available && modelSelect.value === 'trained') {
      modelSelect.value = 'random';
      showModelFields('random');
      void compute(read());
    } else if (available && l.phase !== 'training' && modelSelect.value === 'trained' && walkStore.get().status !== 'loading-engine') {
      void compute(read()); // the model changed (more training, a new checkpoint): show its new weights
    }
  };
}
