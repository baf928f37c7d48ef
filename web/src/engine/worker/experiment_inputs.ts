// The files an experiment reads (a shipped model, a held-out text: heads-real): the module has no
// disk, so before a run the worker asks the engine which paths the run reads
// (lab.experimentInputs), fetches each from the page's server, where scripts/build_web.sh put it
// under the same path (models/tang.safetensors, data/splits/tang_heldout.txt, ...), and gives its
// bytes to the engine (lab.provideExperimentFile). Nothing is fetched for the experiments that
// read no file, and a file is fetched once per worker.
import type { AttnLab, ExperimentOptions } from '../../../attnlab';

const provided = new Set<string>();

export async function provideExperimentInputs(lab: AttnLab, name: string, options: ExperimentOptions, base: string): Promise<void> {
  for (const path of lab.experimentInputs(name, options).filter((p) => !provided.has(p))) {
    const url = new URL(path, base).href;
    let r: Response;
    try {
      r = await fetch(url);
    } catch (e) {
      throw new Error(`the experiment ${name} reads ${path}, which could not be fetched from ${url} (${e instanceof Error ? e.message : String(e)})`);
    }
    if (!r.ok) throw new Error(`the experiment ${name} reads ${path}, which could not be fetched from ${url} (HTTP ${r.status})`);
    lab.provideExperimentFile(path, new Uint8Array(await r.arrayBuffer()));
    provided.add(path);
  }
}
