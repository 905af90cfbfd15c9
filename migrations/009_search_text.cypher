// BM25 indexes each sentence and passage with its article's title before its text
// (searchText, written by the ingest with the same expression): many passages name their
// subject only in the title. The new indexes fill in the background; queries wait until they are online.
MATCH (a:Article)-[:HAS_SENTENCE|HAS_PASSAGE]->(u)
CALL (a, u) {
  SET u.searchText = CASE WHEN coalesce(a.title, '') = '' THEN u.text ELSE a.title + '\n' + u.text END
} IN TRANSACTIONS OF 10000 ROWS;
DROP INDEX sentence_text IF EXISTS;
DROP INDEX passage_text IF EXISTS;
CREATE FULLTEXT INDEX sentence_search_text IF NOT EXISTS FOR (s:Sentence) ON EACH [s.searchText]
  OPTIONS { indexConfig: { `fulltext.analyzer`: 'english' } };
CREATE FULLTEXT INDEX passage_search_text IF NOT EXISTS FOR (p:Passage) ON EACH [p.searchText]
  OPTIONS { indexConfig: { `fulltext.analyzer`: 'english' } };
CALL db.awaitIndexes(600);
