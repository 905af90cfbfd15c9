/**
 * ChronoQL's MCP tools. Each is one GraphQL operation of the API, run in-process through the
 * same resolvers, checks, costs and budgets as over HTTP: its variables are the tool's arguments
 * and its data the tool's structured result. Descriptions are written for a model choosing a
 * tool: what it answers, what "as of" means, what an abstention is.
 */
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  /** The GraphQL operation the tool runs. */
  operation: string;
  /** What a model should know of each variable the caller gives, beside its type. */
  arguments: Readonly<Record<string, string>>;
  /** Variables the tool sets itself from the caller's arguments. */
  derived?: { names: readonly string[]; values(args: Record<string, unknown>): Record<string, unknown> };
  annotations: ToolAnnotations;
}

const AS_OF =
  'The date to answer as of: "2024-08-01" (midnight UTC) or an RFC 3339 date-time. Every version of an article, sentence or fact is valid from the snapshot that made it until the snapshot that replaced it; "as of" a date means the versions valid then. Leave it out for now (the latest snapshot).';
const SUBJECT = 'The article the fact belongs to, by id (the article ids that search hits and ask evidence carry, e.g. "France").';
const ATTRIBUTE = 'The infobox attribute, e.g. "Prime Minister"; matched ignoring case and spacing.';
const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

const ASK: ToolDefinition = {
  name: 'ask',
  title: 'Ask a question as of a date',
  description:
    'Answers a question from the temporal knowledge graph as of a date. Use it for questions whose answer changes over time (who holds an office, a current champion, a rate) and to ask about the past: the question may name its own time ("in July 2024", "before 2020", "currently"), which is read and shown in answer.timeScope.\n' +
    'answer.text is the answer ChronoQL stands behind (answer.adopted is true; answer.certainty.reliable is its calibrated probability of being right). ' +
    'An abstention is adopted: false with text: null: no candidate was trusted enough. Then answer.guess holds the best candidate, which may be wrong or out of date, and answer.decision.cues[0] says why; present a guess as unverified, or look further with search or fact_history.\n' +
    'answer.evidence lists the passages, sentences and facts the answer was drawn from, chosen answer first, each with its article and the period it was valid (validFrom until validTo, null while still valid); for a question about a period answered from the text, statedTime is the time its words state (when it held in the world, which the snapshot clock may not know). For a follow-up question ("And before that?"), pass the earlier turns in conversation.',
  operation: `query Ask($question: String!, $asOf: DateTime, $conversation: [TurnInput!]) {
    answer: ask(question: $question, asOf: $asOf, conversation: $conversation) {
      question asOf text adopted guess
      certainty { reliable }
      timeScope { kind text from to }
      decision { action timeSensitive cues }
      evidence { kind id articleId text validFrom validTo statedTime { text from to } }
      otherAnswers { text adopted from to }
    }
  }`,
  arguments: {
    question: 'The question in plain language, e.g. "Who is the prime minister of France?".',
    asOf: AS_OF,
    conversation:
      "The earlier turns of this conversation, oldest first: each question, the answer given, and the ids of that answer's evidence (answer.evidence[].id), so that a follow-up continues from them.",
  },
  annotations: READ_ONLY,
};

const SEARCH: ToolDefinition = {
  name: 'search',
  title: 'Search passages as of a date',
  description:
    "Finds the passages (or sentences) of the knowledge graph that best match a query among those valid at a date: a passage written later, or replaced earlier, is never returned. Each hit has its text, article, rank, score and the period it was valid. Use it to read evidence in the store's own words; for a direct answer use ask.",
  operation: `query Search($query: String!, $asOf: DateTime, $k: Int, $mode: SearchMode, $unit: SearchUnit) {
    hits: search(query: $query, asOf: $asOf, k: $k, mode: $mode, unit: $unit) { rank score unit id articleId text validFrom validTo }
  }`,
  arguments: {
    query: 'What to look for: a question or keywords.',
    asOf: AS_OF,
    k: 'How many hits to return (1 to 100, default 10).',
    mode: "HYBRID (default) fuses dense vectors and BM25; DENSE or LEXICAL use one of them; NEO4J_VECTOR uses Neo4j's vector index.",
    unit: 'PASSAGE (default, up to 1,500 characters) or SENTENCE.',
  },
  annotations: READ_ONLY,
};

const FACT_AS_OF: ToolDefinition = {
  name: 'fact_as_of',
  title: 'A fact as of a date',
  description:
    'The value of one infobox attribute of an article (subject "France", attribute "Prime Minister") as of a date, with the period it held (validFrom until validTo; validTo is null while it still holds), how it changed at its snapshot (change: UPDATED, NEW, REFINED; null in the article\'s first snapshot) and the value it replaced (previous). fact is null when the article had no such attribute then, also before its first snapshot.',
  operation: `query FactAsOf($subject: ID!, $attribute: String!, $asOf: DateTime) {
    fact(subject: $subject, attribute: $attribute, asOf: $asOf) {
      subject attribute value change validFrom validTo outdated recordedAt
      previous { value validFrom validTo }
    }
  }`,
  arguments: { subject: SUBJECT, attribute: ATTRIBUTE, asOf: AS_OF },
  annotations: READ_ONLY,
};

const FACT_HISTORY: ToolDefinition = {
  name: 'fact_history',
  title: 'The history of a fact',
  description:
    'Every value an infobox attribute of an article has had, oldest first, each with the period it held (validFrom until validTo; null for the value that still holds) and how it changed. Use it for "who held it before", "since when" and "how often did it change". An empty list when the article has no such attribute.',
  operation: `query FactHistory($subject: ID!, $attribute: String!) {
    history: factHistory(subject: $subject, attribute: $attribute) { value change addedMembers removedMembers validFrom validTo outdated recordedAt }
  }`,
  arguments: { subject: SUBJECT, attribute: ATTRIBUTE },
  annotations: READ_ONLY,
};

const ARTICLE_AS_OF: ToolDefinition = {
  name: 'article_as_of',
  title: 'An article as of a date',
  description:
    "An article as it stood at a date, with its infobox facts valid then. Without changesSince: its sentences in order, each labelled against the article's previous snapshot (UNCHANGED, CHANGED, NEW; null in its first snapshot), and the sentences that snapshot deleted. " +
    "With changesSince: instead of the whole text, what changed after that date up to asOf, as the article's change events oldest first (a sentence new, changed or deleted, a fact new, updated or removed), each with its date and the text or value before and after; at most 100, read on with changes_since. article is null when no article has that id.",
  operation: `query ArticleAsOf($id: ID!, $asOf: DateTime, $changesSince: DateTime, $summary: Boolean!) {
    article(id: $id) {
      id title validFrom validTo
      sentences(asOf: $asOf) @skip(if: $summary) { index label text validFrom }
      deletedSentences(asOf: $asOf) @skip(if: $summary) { text validFrom validTo }
      facts(asOf: $asOf) { attribute value change validFrom validTo }
    }
    changes(articleIds: [$id], since: $changesSince, until: $asOf, first: 100) @include(if: $summary) {
      totalCount
      pageInfo { hasNextPage }
      edges { node { seq kind at sentence { text } previousSentence { text } fact { attribute value } previousFact { value } } }
    }
  }`,
  arguments: {
    id: 'The article id, e.g. "France" or "2030 Winter Olympics".',
    asOf: AS_OF,
    changesSince: 'A date before asOf: summarise what changed after it instead of returning the whole text.',
  },
  derived: { names: ['summary'], values: (args) => ({ summary: args.changesSince !== undefined && args.changesSince !== null }) },
  annotations: READ_ONLY,
};

const CHANGES_SINCE: ToolDefinition = {
  name: 'changes_since',
  title: 'Changes since a sequence number or date',
  description:
    'The change feed: what each ingested snapshot changed, one event per sentence or fact, in sequence order. Each event has seq (gap-free and increasing), kind, article, at (the date of its snapshot, when the change took effect) and the sentence or fact before and after. ' +
    'Start after a sequence number (afterSeq) or after a date (since), optionally only some articles or kinds. To read on, call again with afterSeq set to the last seq received while pageInfo.hasNextPage is true.',
  operation: `query ChangesSince($afterSeq: Int, $since: DateTime, $articleIds: [ID!], $kinds: [ChangeKind!], $first: Int) {
    changes(afterSeq: $afterSeq, since: $since, articleIds: $articleIds, kinds: $kinds, first: $first) {
      totalCount
      pageInfo { hasNextPage }
      edges { node { seq kind articleId at recordedAt sentence { text } previousSentence { text } fact { attribute value } previousFact { value } } }
    }
  }`,
  arguments: {
    afterSeq: 'Only events after this sequence number (0: from the start).',
    since: 'Only changes dated after this date: "2024-08-01" or an RFC 3339 date-time.',
    articleIds: 'Only changes of these articles (ids).',
    kinds: 'Only these kinds of change.',
    first: 'How many events to return (0 to 500, default 50).',
  },
  annotations: READ_ONLY,
};

const SNAPSHOT_FIELDS = 'id takenAt recordedAt source status complete articleCount changeCount completedAt searchable failure { code message }';

const INGEST_SNAPSHOT: ToolDefinition = {
  name: 'ingest_snapshot',
  title: 'Ingest a dated snapshot',
  description:
    "Writes a dated snapshot of articles (text and infobox facts) into the store, exactly as the GraphQL mutation ingestSnapshot does: every sentence is labelled against the article's previous version and every fact as new, updated or removed, and every earlier version is kept. Needs an API key with the writer role (admin for complete: true). " +
    'The whole snapshot is checked before anything is written: a bad article is refused with INVALID_SNAPSHOT and every problem, and nothing is stored. Snapshots must come in date order (SNAPSHOT_OUT_OF_ORDER); sending the same snapshot again changes nothing. ' +
    'Once the checks pass it answers at once with the snapshot, INGESTING (COMPLETE when that snapshot is already stored), and writes it in the background: call the snapshot tool with its id until it is COMPLETE and searchable, or FAILED with the failure that says why (nothing of a failed snapshot is kept).',
  operation: `mutation IngestSnapshot($takenAt: DateTime!, $articles: [ArticleInput!]!, $source: String = "mcp", $complete: Boolean = false) {
    snapshot: ingestSnapshot(takenAt: $takenAt, articles: $articles, source: $source, complete: $complete) { ${SNAPSHOT_FIELDS} }
  }`,
  arguments: {
    takenAt:
      'The date the snapshot describes ("2025-06-01" or an RFC 3339 date-time): the start of its versions\' valid time. At most 5 minutes past the server\'s clock.',
    articles: 'The articles of the snapshot: id, optional title, text (paragraphs separated by blank lines) and infobox entries (attribute, value).',
    source: 'Where the snapshot comes from (recorded with it).',
    complete: 'The snapshot lists every article: remove the articles it does not list (admin role).',
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
};

const SNAPSHOT: ToolDefinition = {
  name: 'snapshot',
  title: 'A snapshot and how its ingest went',
  description:
    'A snapshot by id (its date, YYYY-MM-DD, or the date-time it was taken at): INGESTING while it is written, COMPLETE once stored (searchable says whether every search finds its text yet), FAILED with the failure that says why. Use it after ingest_snapshot. null when no snapshot has that id.',
  operation: `query Snapshot($id: ID!) { snapshot(id: $id) { ${SNAPSHOT_FIELDS} } }`,
  arguments: { id: 'The snapshot id ingest_snapshot answered with.' },
  annotations: READ_ONLY,
};

export const TOOLS: readonly ToolDefinition[] = [ASK, SEARCH, FACT_AS_OF, FACT_HISTORY, ARTICLE_AS_OF, CHANGES_SINCE, INGEST_SNAPSHOT, SNAPSHOT];
