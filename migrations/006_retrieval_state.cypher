// One retrieval state per store (its identity, its embedder, the embedding lease): processes
// that MERGE it at once must not create two.
CREATE CONSTRAINT retrieval_state_name IF NOT EXISTS FOR (s:RetrievalState) REQUIRE s.name IS UNIQUE;
