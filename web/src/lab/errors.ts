// Engine errors the lab shows, said as one sentence a reader can act on; the engine's own text
// stays available as details.
import { t, type Key } from '../i18n';
import type { LabError } from './state';

/** The sentence for each kind of refused file the engine names (an Error's `problem`, core/error.hpp FileProblem). */
const FILE_PROBLEM: Record<string, Key> = {
  too_short: 'lab.ckpt.short',
  header_too_long: 'lab.ckpt.notSafetensors',
  truncated: 'lab.ckpt.truncated',
  bad_header: 'lab.ckpt.badJson',
  not_a_checkpoint: 'lab.ckpt.notAttnlab',
  mismatch: 'lab.ckpt.mismatch',
};

/** Why a checkpoint file was refused, from the engine's Model.load error. */
export function checkpointError(file: string, error: Error & { problem?: string }): LabError {
  const why = t((error.problem && FILE_PROBLEM[error.problem]) || 'lab.ckpt.unreadable');
  return { text: t('lab.ckpt.refused', { file, why }), details: error.message };
}
