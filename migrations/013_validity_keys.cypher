// Lucene cannot compare datetimes, so a lexical search as of a date asked it for candidates of
// any time and kept the valid ones after: in a store that grew after that date, or whose pages
// were rewritten many times, it read up to 25,600 candidates to find k. Sentences and passages
// now carry their valid time as sortable text (graph/validity.ts, validityKey: epoch milliseconds
// plus 10^16, in 17 digits; '99999999999999999' while current), indexed beside searchText, so
// Lucene keeps only the versions valid then. The ingest writes the keys with the same expression.
MATCH (u) WHERE u:Sentence OR u:Passage
CALL (u) {
  SET u.validFromKey = right('00000000000000000' + toString(u.validFrom.epochMillis + 10000000000000000), 17),
      u.validToKey = CASE WHEN u.validTo IS NULL THEN '99999999999999999'
                          ELSE right('00000000000000000' + toString(u.validTo.epochMillis + 10000000000000000), 17) END
} IN TRANSACTIONS OF 10000 ROWS;
DROP INDEX sentence_search_text IF EXISTS;
DROP INDEX passage_search_text IF EXISTS;
CREATE FULLTEXT INDEX sentence_search_text IF NOT EXISTS FOR (s:Sentence) ON EACH [s.searchText, s.validFromKey, s.validToKey]
  OPTIONS { indexConfig: { `fulltext.analyzer`: 'english' } };
CREATE FULLTEXT INDEX passage_search_text IF NOT EXISTS FOR (p:Passage) ON EACH [p.searchText, p.validFromKey, p.validToKey]
  OPTIONS { indexConfig: { `fulltext.analyzer`: 'english' } };
CALL db.awaitIndexes(600);
