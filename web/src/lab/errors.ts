// Engine errors the lab shows, said as one sentence a reader can act on; the engine's own text
// stays available as details.
import { t } from '../i18n';
import type { LabError } from './state';

/** Why a checkpoint file was refused, from the engine's Model.load error (src/io/*.cpp messages). */
export function checkpointError(file: string, engineText: string): LabError {
  const why = (() => {
    if (/fewer than the 8-byte header length/.test(engineText)) return t('ckpt.short');
    if (/header length \d+ exceeds the limit/.test(engineText)) return t('ckpt.notSafetensors');
    if (/truncated|not a range within the data buffer/.test(engineText)) return t('ckpt.truncated');
    if (/header is not valid JSON|must be a JSON object|has unexpected key|has no '|must be an array|unknown dtype/.test(engineText)) return t('ckpt.badJson');
    if (/metadata "format"|metadata "version"|stored model config/.test(engineText)) return t('ckpt.notAttnlab');
    if (/config mismatch|missing tensors|unexpected tensors|mismatched tensors/.test(engineText)) return t('ckpt.mismatch');
    return t('ckpt.unreadable');
  })();
  return { text: t('ckpt.refused', { file, why }), details: engineText };
}
