import type { Embedder, EmbedderKind, TextRole } from '../embedding/types.js';
import type { Admission } from '../platform/fairShares.js';

/**
 * An embedder whose work is given out a text at a time: each text is one unit of CPU work, run
 * when its caller's turn comes, so one caller's batch of 256 queries does not hold the cores
 * (and the event loop) while another caller's single question waits behind all of it. A remote
 * embedder spends no local CPU and batches its requests, so it is left as it is.
 */
export function admittedEmbedder(embedder: Embedder, kind: EmbedderKind, admit: Admission): Embedder {
  if (kind === 'openai') return embedder;
  return {
    id: embedder.id,
    dimension: embedder.dimension,
    embed: async (texts: readonly string[], role?: TextRole): Promise<Float32Array> => {
      const out = new Float32Array(texts.length * embedder.dimension);
      for (let i = 0; i < texts.length; i++) out.set(await admit(() => embedder.embed([texts[i]!], role)), i * embedder.dimension);
      return out;
    },
    close: async () => embedder.close?.(),
  };
}
