// Lookups by parent article and by valid time, the shape of every as-of query.
CREATE INDEX sentence_article IF NOT EXISTS FOR (s:Sentence) ON (s.articleId, s.validFrom);
CREATE INDEX sentence_article_valid_to IF NOT EXISTS FOR (s:Sentence) ON (s.articleId, s.validTo);
CREATE INDEX fact_subject_attribute IF NOT EXISTS FOR (f:Fact) ON (f.subject, f.attributeKey);
CREATE INDEX snapshot_taken_at IF NOT EXISTS FOR (s:Snapshot) ON (s.takenAt);
CREATE INDEX change_event_article IF NOT EXISTS FOR (e:ChangeEvent) ON (e.articleId, e.seq);
CREATE INDEX article_title IF NOT EXISTS FOR (a:Article) ON (a.title);
