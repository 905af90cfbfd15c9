// Event time (issue 31): when what a version's text states held, read from the text. Each version
// keeps its intervals as parallel lists and their hull as two scalars (graph/eventTimeProperties.ts):
// Neo4j 5 indexes a list only as a whole value, so the range indexes are on the hull, and "versions
// whose text speaks of [from, to)" seeks them before it checks each interval.
CREATE INDEX sentence_event_from IF NOT EXISTS FOR (s:Sentence) ON (s.eventFrom);
CREATE INDEX sentence_event_to IF NOT EXISTS FOR (s:Sentence) ON (s.eventTo);
CREATE INDEX passage_event_from IF NOT EXISTS FOR (p:Passage) ON (p.eventFrom);
CREATE INDEX passage_event_to IF NOT EXISTS FOR (p:Passage) ON (p.eventTo);
CREATE INDEX fact_event_from IF NOT EXISTS FOR (f:Fact) ON (f.eventFrom);
CREATE INDEX fact_event_to IF NOT EXISTS FOR (f:Fact) ON (f.eventTo);
// Versions written before this were not read: `chronoql event-times` reads them and removes the label.
MATCH (v) WHERE v:Sentence OR v:Passage OR v:Fact
CALL (v) {
  SET v:PendingEventTimes
} IN TRANSACTIONS OF 10000 ROWS;
CALL db.awaitIndexes(600);
