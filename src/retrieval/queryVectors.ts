import type { Embedder } from '../embedding/index.js';

/**
 * The queries' vectors, embedding only those the caller did not supply; null for a query that
 * can rank nothing (a text with no known word embeds to zero).
 */
export async function queryVectors(
  embedder: Embedder,
  queries: readonly string[],
  given: ReadonlyArray<Float32Array | null> = [],
): Promise<Array<Float32Array | null>> {
  const missing = queries.flatMap((_, q) => (given[q] ? [] : [q]));
  const embedded =
    missing.length === 0
      ? new Float32Array(0)
      : await embedder.embed(
          missing.map((q) => queries[q]!),
          'query',
        );
  const d = embedder.dimension;
  const vectors = queries.map((_, q) => given[q] ?? null);
  missing.forEach((q, i) => (vectors[q] = embedded.subarray(i * d, (i + 1) * d)));
  return vectors.map((vector) => (vector && vector.some((x) => x !== 0) ? vector : null));
}
