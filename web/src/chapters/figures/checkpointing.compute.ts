// §6: the bytes a decoder's blocks keep for backward (lab.activationMemory) at each depth, without
// and with gradient checkpointing.
import type { AttnLab } from '../../../attnlab';

export interface CheckpointingRequest { figure: 'checkpointing'; depths: number[]; dModel: number; numHeads: number; seqLen: number; batch: number }
export interface CheckpointingFigure {
  figure: 'checkpointing';
  rows: { layers: number; full: number; checkpointed: number }[];
  dModel: number;
  seqLen: number;
  batch: number;
}

export function checkpointing(lab: AttnLab, r: CheckpointingRequest): CheckpointingFigure {
  const size = { dModel: r.dModel, numHeads: r.numHeads, ffDim: 4 * r.dModel, seqLen: r.seqLen, batch: r.batch };
  const rows = r.depths.map((layers) => ({
    layers,
    full: lab.activationMemory({ ...size, numLayers: layers }).total,
    checkpointed: lab.activationMemory({ ...size, numLayers: layers, gradientCheckpointing: true }).total,
  }));
  return { figure: 'checkpointing', rows, dModel: r.dModel, seqLen: r.seqLen, batch: r.batch };
}
