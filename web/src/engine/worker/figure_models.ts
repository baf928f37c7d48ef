// The shipped models the chapters' figures read (chapters/figures/shipped.compute.ts), opened in
// the engine worker when a figure first asks for one: fetched with its progress, read by
// Model.load, then kept for every later figure. Two figures asking at once share one fetch.
import type { AttnLab } from '../../../attnlab';
import { holdShipped, isHeld } from '../../chapters/figures/shipped.compute';
import { shippedFile, type ShippedName, type ShippedRef } from '../protocol/shipped';
import { fetchWithProgress } from './pretrained';

const opening = new Map<ShippedName, Promise<void>>();

export function openFigureModel(lab: AttnLab, ref: ShippedRef, progress: (loaded: number, total: number) => void): Promise<void> {
  if (isHeld(ref.name)) return Promise.resolve();
  let p = opening.get(ref.name);
  if (!p) {
    p = (async () => {
      const bytes = await fetchWithProgress(ref.url, shippedFile(ref.name), progress);
      holdShipped(ref.name, lab.Model.load(bytes));
    })().finally(() => opening.delete(ref.name));
    opening.set(ref.name, p);
  }
  return p;
}
