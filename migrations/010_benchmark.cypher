// The living benchmark (issue 20): one BenchmarkItem node per version of an item, linked to the
// sentences or fact it rests on. Maintenance after a snapshot finds the versions it closed and
// the versions it created by valid time alone, so both times get their own index.
CREATE CONSTRAINT benchmark_item_id IF NOT EXISTS FOR (b:BenchmarkItem) REQUIRE b.id IS UNIQUE;
CREATE INDEX benchmark_item_item IF NOT EXISTS FOR (b:BenchmarkItem) ON (b.itemId);
CREATE INDEX benchmark_item_valid_from IF NOT EXISTS FOR (b:BenchmarkItem) ON (b.validFrom);
CREATE INDEX benchmark_item_valid_to IF NOT EXISTS FOR (b:BenchmarkItem) ON (b.validTo);
CREATE INDEX sentence_valid_from IF NOT EXISTS FOR (s:Sentence) ON (s.validFrom);
CREATE INDEX sentence_valid_to IF NOT EXISTS FOR (s:Sentence) ON (s.validTo);
CREATE INDEX fact_valid_from IF NOT EXISTS FOR (f:Fact) ON (f.validFrom);
CREATE INDEX fact_valid_to IF NOT EXISTS FOR (f:Fact) ON (f.validTo);
CALL db.awaitIndexes(600);
