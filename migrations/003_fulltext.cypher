// Lucene (BM25) over sentence text, with English stemming and stop words.
CREATE FULLTEXT INDEX sentence_text IF NOT EXISTS FOR (s:Sentence) ON EACH [s.text]
  OPTIONS { indexConfig: { `fulltext.analyzer`: 'english' } };
