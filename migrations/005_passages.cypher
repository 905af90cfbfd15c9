// Passages: the retrieval units of an article version (issue 4).
CREATE CONSTRAINT passage_id IF NOT EXISTS FOR (p:Passage) REQUIRE p.id IS UNIQUE;
CREATE INDEX passage_article IF NOT EXISTS FOR (p:Passage) ON (p.articleId, p.validFrom);
CREATE INDEX passage_row IF NOT EXISTS FOR (p:Passage) ON (p.rowId);
CREATE INDEX sentence_row IF NOT EXISTS FOR (s:Sentence) ON (s.rowId);
// When a version was closed (transaction time), so vector indexes can follow closures incrementally.
CREATE INDEX passage_closed_at IF NOT EXISTS FOR (p:Passage) ON (p.closedAt);
CREATE INDEX sentence_closed_at IF NOT EXISTS FOR (s:Sentence) ON (s.closedAt);
CREATE FULLTEXT INDEX passage_text IF NOT EXISTS FOR (p:Passage) ON EACH [p.text]
  OPTIONS { indexConfig: { `fulltext.analyzer`: 'english' } };
// Row numbers of the native vector indexes, handed out once per unit version.
MERGE (c:ChangeSequence {name: 'passageRows'}) ON CREATE SET c.value = 0;
MERGE (c:ChangeSequence {name: 'sentenceRows'}) ON CREATE SET c.value = 0;
CREATE INDEX passage_embedded_at IF NOT EXISTS FOR (p:Passage) ON (p.embeddedAt);
CREATE INDEX sentence_embedded_at IF NOT EXISTS FOR (s:Sentence) ON (s.embeddedAt);
