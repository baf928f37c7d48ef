// Engine errors the lab shows, said as one sentence a reader can act on; the engine's own text
// stays available as details.
import type { LabError } from './state';

/** Why a checkpoint file was refused, from the engine's Model.load error (src/io/*.cpp messages). */
export function checkpointError(file: string, engineText: string): LabError {
  const why = (() => {
    if (/fewer than the 8-byte header length/.test(engineText)) return 'it is too short to be one (a checkpoint starts with an 8-byte header length)';
    if (/header length \d+ exceeds the limit/.test(engineText)) return 'it does not start like a safetensors file (its first 8 bytes are not a plausible header length)';
    if (/truncated|not a range within the data buffer/.test(engineText)) return 'the file is cut short: its header promises more bytes than it holds (an interrupted download?)';
    if (/header is not valid JSON|must be a JSON object|has unexpected key|has no '|must be an array|unknown dtype/.test(engineText)) return 'its header is not valid safetensors JSON';
    if (/metadata "format"|metadata "version"|stored model config/.test(engineText)) return 'it is a safetensors file, but not one attnlab saved (no valid attnlab model config in its metadata)';
    if (/config mismatch|missing tensors|unexpected tensors|mismatched tensors/.test(engineText)) return 'its tensors do not match the model its config describes';
    return 'the engine could not read it';
  })();
  return { text: `“${file}” is not a checkpoint this lab can load: ${why}.`, details: engineText };
}
