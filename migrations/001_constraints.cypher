// Identity of every node kind ChronoQL writes; each also gives a range index on the key.
CREATE CONSTRAINT snapshot_id IF NOT EXISTS FOR (s:Snapshot) REQUIRE s.id IS UNIQUE;
CREATE CONSTRAINT article_id IF NOT EXISTS FOR (a:Article) REQUIRE a.id IS UNIQUE;
CREATE CONSTRAINT sentence_id IF NOT EXISTS FOR (s:Sentence) REQUIRE s.id IS UNIQUE;
CREATE CONSTRAINT fact_id IF NOT EXISTS FOR (f:Fact) REQUIRE f.id IS UNIQUE;
CREATE CONSTRAINT change_event_seq IF NOT EXISTS FOR (e:ChangeEvent) REQUIRE e.seq IS UNIQUE;
CREATE CONSTRAINT change_sequence_name IF NOT EXISTS FOR (c:ChangeSequence) REQUIRE c.name IS UNIQUE;
