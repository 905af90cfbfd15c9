import 'reflect-metadata';
import { type ClassType, Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { ChangeKind, FactChangeKind, SentenceLabel, SnapshotStatus } from '../domain/model.js';
import { SearchMode, SearchUnit } from '../retrieval/retriever.js';
import { DateTimeScalar } from './scalars.js';

registerEnumType(SentenceLabel, {
  name: 'SentenceLabel',
  description: "How a sentence relates to the article's previous snapshot (GrowOVER).",
});
registerEnumType(FactChangeKind, {
  name: 'FactChange',
  description: "How a fact version came to be relative to the article's previous snapshot (DynaQuest).",
});
registerEnumType(ChangeKind, { name: 'ChangeKind', description: 'What a change event records.' });
registerEnumType(SnapshotStatus, {
  name: 'SnapshotStatus',
  valuesConfig: {
    INGESTING: { description: 'Being written; poll snapshot(id) until it is COMPLETE or FAILED.' },
    COMPLETE: { description: 'Written whole: every article of it is stored (see `searchable` for search).' },
    FAILED: { description: 'Rolled back (nothing of it is stored) or stopped part-way (re-run the same ingest to resume); `failure` says which and why.' },
  },
});

@ObjectType({ description: 'Why an ingest failed.' })
export class SnapshotFailure {
  @Field(() => String, { description: 'INGEST_FAILED, CREDENTIAL_REVOKED, INGEST_INTERRUPTED or INGEST_ABANDONED.' })
  code!: string;

  @Field(() => String, { description: 'What happened, and what is stored of the snapshot.' })
  message!: string;
}

@ObjectType({ description: 'A dated knowledge snapshot: being ingested, ingested, or one whose ingest failed.' })
export class Snapshot {
  @Field(() => ID)
  id!: string;

  @Field(() => DateTimeScalar, { description: 'The date the snapshot describes: the start of its valid time.' })
  takenAt!: Date;

  @Field(() => DateTimeScalar, { description: 'When ChronoQL recorded it (transaction time).' })
  recordedAt!: Date;

  @Field(() => String)
  source!: string;

  @Field(() => SnapshotStatus)
  status!: SnapshotStatus;

  @Field(() => DateTimeScalar, { nullable: true, description: 'When it became COMPLETE.' })
  completedAt!: Date | null;

  @Field(() => SnapshotFailure, { nullable: true, description: 'Why it FAILED; null otherwise.' })
  failure!: SnapshotFailure | null;

  @Field(() => Boolean, { description: 'Whether the snapshot listed every article, so missing ones were removed.' })
  complete!: boolean;

  @Field(() => Int)
  articleCount!: number;

  @Field(() => Int, { description: 'The change events it recorded (set when COMPLETE).' })
  changeCount!: number;
}

@ObjectType({ description: 'An article; its text and facts are asked for as of a date.' })
export class Article {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'The title in the latest snapshot.' })
  title!: string;

  @Field(() => DateTimeScalar, { description: 'The date of the first snapshot that contained the article.' })
  validFrom!: Date;

  @Field(() => DateTimeScalar, { nullable: true, description: 'When a complete snapshot no longer listed it.' })
  validTo!: Date | null;

  @Field(() => DateTimeScalar)
  recordedAt!: Date;
}

@ObjectType({
  description:
    'A time a text states about when something held (event time), read when the version was written: [from, to) at the granularity the text states ("in 2005" is all of 2005). Beside validFrom (when a snapshot said it) and recordedAt (when ChronoQL recorded it).',
})
export class EventTime {
  @Field(() => DateTimeScalar, { nullable: true, description: 'Start (inclusive); null when open ("until 2019").' })
  from!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true, description: 'End (exclusive); null when open ("since 1 June 2024", "2019–present").' })
  to!: Date | null;

  @Field(() => String, { description: 'The words it was read from, as written.' })
  text!: string;

  @Field(() => Int, { description: "Where those words start in the version's text (0 for a fact's term, read from other attributes)." })
  start!: number;

  @Field(() => Int, { description: 'Where they end.' })
  end!: number;
}

@InputType({ description: 'A period of event time, [from, to); a missing bound is open.' })
export class PeriodInput {
  @Field(() => DateTimeScalar, { nullable: true })
  from?: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  to?: Date | null;
}

@ObjectType({ description: 'One version of a sentence, valid from one snapshot until it was changed or deleted.' })
export class Sentence {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  articleId!: string;

  @Field(() => String)
  text!: string;

  @Field(() => DateTimeScalar)
  validFrom!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  validTo!: Date | null;

  @Field(() => DateTimeScalar)
  recordedAt!: Date;

  @Field(() => Boolean, { description: 'Whether a paragraph starts with this sentence.' })
  startsParagraph!: boolean;

  @Field(() => [EventTime], { description: 'The times the sentence states, read with the sentences of its paragraph before it ("two years later").' })
  eventTimes!: EventTime[];

  @Field(() => Int, {
    nullable: true,
    description: 'Position in the article (0-based) in the snapshot asked about; set when listed by Article.sentences.',
  })
  index!: number | null;

  @Field(() => SentenceLabel, {
    nullable: true,
    description:
      "Label relative to the article's previous snapshot, as of the date asked about; null in the article's first snapshot and outside Article.sentences / Article.deletedSentences.",
  })
  label!: SentenceLabel | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'For a sentence created as NEW: false when the labeler was not sure it is new rather than a change (GrowOVER); null otherwise.',
  })
  confident!: boolean | null;
}

@ObjectType({ description: 'One version of an infobox fact (subject, attribute → value).' })
export class Fact {
  @Field(() => ID)
  id!: string;

  @Field(() => ID, { description: 'The article the fact is about.' })
  subject!: string;

  @Field(() => String)
  attribute!: string;

  @Field(() => String)
  value!: string;

  @Field(() => FactChangeKind, { nullable: true, description: "null for facts of an article's first snapshot." })
  change!: FactChangeKind | null;

  @Field(() => [String], { description: 'For an updated list value (comma-, semicolon- or "and"-separated), the members it gained.' })
  addedMembers!: string[];

  @Field(() => [String], { description: 'For an updated list value, the members it lost.' })
  removedMembers!: string[];

  @Field(() => [EventTime], {
    description:
      'When the value held, as the infobox says: read from the value ("since 2019", "(2004–2009)") or, for an office, from its term_start and term_end.',
  })
  eventTimes!: EventTime[];

  @Field(() => DateTimeScalar)
  validFrom!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  validTo!: Date | null;

  @Field(() => DateTimeScalar)
  recordedAt!: Date;

  @Field(() => Boolean, { description: 'OUTDATED: a later snapshot superseded or removed this value.' })
  outdated!: boolean;
}

@ObjectType({ description: 'One entry of the change feed.' })
export class ChangeEvent {
  @Field(() => Int, { description: 'Global, gap-free, increasing position in the feed.' })
  seq!: number;

  @Field(() => ChangeKind)
  kind!: ChangeKind;

  @Field(() => ID)
  snapshotId!: string;

  @Field(() => ID)
  articleId!: string;

  @Field(() => DateTimeScalar, { description: 'Valid time of the change: the date of its snapshot.' })
  at!: Date;

  @Field(() => DateTimeScalar, { description: 'Transaction time: when it was recorded.' })
  recordedAt!: Date;

  sentenceId!: string | null;
  previousSentenceId!: string | null;
  factId!: string | null;
  previousFactId!: string | null;
}

@ObjectType({ description: 'Relay page information.' })
export class PageInfo {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => Boolean)
  hasPreviousPage!: boolean;

  @Field(() => String, { nullable: true })
  startCursor!: string | null;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

export interface Edge<T> {
  node: T;
  cursor: string;
}

export interface Connection<T> {
  edges: Array<Edge<T>>;
  pageInfo: PageInfo;
  totalCount: number;
}

/** A Relay connection type (`<Name>Connection` with `<Name>Edge`) for one node type. */
export function connectionOf<T extends object>(nodeType: ClassType<T>, name: string) {
  @ObjectType(`${name}Edge`)
  class EdgeType implements Edge<T> {
    @Field(() => nodeType)
    node!: T;

    @Field(() => String)
    cursor!: string;
  }

  // Only the concrete subclasses are referenced, so this base never appears in the schema.
  @ObjectType(`${name}ConnectionBase`)
  abstract class ConnectionType implements Connection<T> {
    @Field(() => [EdgeType])
    edges!: EdgeType[];

    @Field(() => PageInfo)
    pageInfo!: PageInfo;

    @Field(() => Int)
    totalCount!: number;
  }
  return ConnectionType;
}

@ObjectType({ description: 'A page of articles (Relay connection).' })
export class ArticleConnection extends connectionOf(Article, 'Article') {}

@ObjectType({ description: 'A page of change events in sequence order (Relay connection).' })
export class ChangeEventConnection extends connectionOf(ChangeEvent, 'ChangeEvent') {}

@InputType({ description: 'One infobox entry.' })
export class InfoboxEntryInput {
  @Field(() => String)
  attribute!: string;

  @Field(() => String)
  value!: string;
}

@InputType({ description: 'One article of a snapshot.' })
export class ArticleInput {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true, description: 'Defaults to the id.' })
  title?: string | null;

  @Field(() => String, { description: 'Paragraphs separated by blank lines.' })
  text!: string;

  @Field(() => [InfoboxEntryInput], { defaultValue: [] })
  infobox!: InfoboxEntryInput[];
}

registerEnumType(SearchMode, {
  name: 'SearchMode',
  description: 'HYBRID fuses DENSE (native vector index) and LEXICAL (Neo4j fulltext, BM25); NEO4J_VECTOR uses Neo4j’s own vector index.',
});
registerEnumType(SearchUnit, { name: 'SearchUnit', description: 'What is retrieved: passages (up to 1,500 characters) or sentences.' });

@ObjectType({ description: 'One retrieved unit, valid at the date searched.' })
export class SearchHit {
  @Field(() => SearchUnit)
  unit!: SearchUnit;

  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  articleId!: string;

  @Field(() => String)
  text!: string;

  @Field(() => DateTimeScalar)
  validFrom!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  validTo!: Date | null;

  @Field(() => [EventTime], { description: 'The times its text states, at their offsets in `text`.' })
  eventTimes!: EventTime[];

  @Field(() => Int, { description: '1-based rank in this result list.' })
  rank!: number;

  @Field(() => Float, { description: 'The score the list is ordered by (fused for HYBRID).' })
  score!: number;

  @Field(() => Float, { nullable: true, description: 'Cosine similarity, when the dense retriever found it.' })
  denseScore!: number | null;

  @Field(() => Int, { nullable: true })
  denseRank!: number | null;

  @Field(() => Float, { nullable: true, description: 'BM25 score, when the lexical retriever found it.' })
  lexicalScore!: number | null;

  @Field(() => Int, { nullable: true })
  lexicalRank!: number | null;
}
