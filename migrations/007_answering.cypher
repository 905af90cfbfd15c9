// Answering (issue 9): an article's changes within a time window (retrieval decision, volatility).
CREATE INDEX change_event_article_at IF NOT EXISTS FOR (e:ChangeEvent) ON (e.articleId, e.at);
