import type { RetrievalRepository, ScoredUnit, UnitRecord } from '../graph/retrievalRepository.js';
import { UNIT_LABEL, type RankedUnits, type RetrievalQuery, type Retriever, type RetrieveOptions } from './retriever.js';

/** BM25 through Neo4j's fulltext (Lucene) index: one round trip per query. */
export class LexicalRetriever implements Retriever {
  constructor(private readonly repository: RetrievalRepository) {}

  search(queries: readonly RetrievalQuery[], options: RetrieveOptions): Promise<RankedUnits[]> {
    return Promise.all(
      queries.map(async (query) => {
        const { hits } = await this.searchLoading(query.text, options, []);
        return { ranking: hits, lexical: hits };
      }),
    );
  }

  /** One query's hits, with the units at `rowIds` (another retriever's candidates) loaded in the same round trip. */
  searchLoading(query: string, options: RetrieveOptions, rowIds: readonly number[]): Promise<{ hits: ScoredUnit[]; loaded: Map<number, UnitRecord> }> {
    return this.repository.lexicalSearch(UNIT_LABEL[options.unit], query, options.asOf, options.k, rowIds);
  }
}
