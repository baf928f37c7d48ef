// Engine errors the lab shows, said as one sentence a reader can act on; the engine's own text
// stays available as details.
import { t, type Key } from '../i18n';
import type { LabError } from './state';

/** The sentence for each kind of refused file the engine names (an Error's `problem`, core/error.hpp FileProblem). */
const FILE_PROBLEM: Record<string, Key> = {
  too_short: 'ckpt.short',
  header_too_long: 'ckpt.notSafetensors',
  truncated: 'ckpt.truncated',
  bad_header: 'ckpt.badJson',
  not_a_checkpoint: 'ckpt.notAttnlab',
  mismatch: 'ckpt.mismatch',
};

/** Why a checkpoint file was refused, from the engine's Model.load error. */
export function checkpointError(file: string, error: Error & { problem?: string }): LabError {
  const why = t((error.problem && FILE_PROBLEM[error.problem]) || 'ckpt.unreadable');
  return { text: t('ckpt.refused', { file, why }), details: error.message };
}
