import type { Embedder } from '../embedding/index.js';
import type { RetrievalRepository } from '../graph/retrievalRepository.js';
import { queryVectors } from './queryVectors.js';
import { UNIT_LABEL, type RankedUnits, type RetrievalQuery, type Retriever, type RetrieveOptions } from './retriever.js';

/** Approximate (HNSW) search through Neo4j's own vector index: the comparison path for the native one. */
export class Neo4jVectorRetriever implements Retriever {
  constructor(
    private readonly repository: RetrievalRepository,
    private readonly embedder: Embedder,
  ) {}

  async search(queries: readonly RetrievalQuery[], options: RetrieveOptions): Promise<RankedUnits[]> {
    const vectors = await queryVectors(
      this.embedder,
      queries.map((query) => query.text),
    );
    return Promise.all(
      vectors.map(async (vector) => ({
        ranking: vector ? await this.repository.vectorSearch(UNIT_LABEL[options.unit], Array.from(vector), this.embedder.id, options.asOf, options.k) : [],
      })),
    );
  }
}
