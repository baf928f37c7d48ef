// §7: one image of the shapes task through an untrained ViT or Swin (patches of 2 pixels, windows
// of 4 patches): where the windows sit on the patch grid and the attention inside them.
import type { AttnLab, Model, ModelConfig, Tensor } from '../../../attnlab';
import { own } from './layer.compute';

export interface VisionRequest { figure: 'vision'; arch: ModelConfig['architecture']; layer: number; seed: number }
export interface VisionFigure {
  figure: 'vision';
  /** (S, S) grayscale pixels of the task's image. */
  image: Tensor;
  label: number;
  layout: { grid: number; window: number; shift: number; windowsPerSide: number; patchSize: number; cls: boolean };
  /** (nW, H, N, N) attention weights of the layer, per window (N = patches per window, + 1 with CLS). */
  maps: Tensor;
}

export function vision(lab: AttnLab, r: VisionRequest): VisionFigure {
  const task = new lab.Task('shapes', { seed: r.seed });
  let model: Model | null = null;
  try {
    const batch = task.sample(1, r.seed);
    const S = task.imageSize();
    const image: Tensor = { shape: [S, S], data: new Float32Array(batch.pixels!.data) };
    model = new lab.Model({ kind: 'encoder', architecture: r.arch, imageSize: S, patchSize: 2, swinWindow: 4, numClasses: task.numClasses(), dModel: 16, numHeads: 2, numLayers: 2, seed: r.seed });
    const maps = own(model.attentionMaps(image, { layer: r.layer }));
    return { figure: 'vision', image, label: batch.labels!.data[0], layout: { ...model.windowLayout(r.layer) }, maps };
  } finally {
    model?.delete();
    task.delete();
  }
}
