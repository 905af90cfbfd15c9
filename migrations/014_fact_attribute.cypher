// A question naming an attribute its subject lacks is refused the nearest one only when some
// article holds the named attribute beside it (graph/answeringRepository.ts,
// attributesHeldTogether): that looks facts up by their attribute as written, which no index
// covered (fact_subject_attribute needs the subject too).
CREATE INDEX fact_attribute IF NOT EXISTS FOR (f:Fact) ON (f.attribute);
