/**
 * The living benchmark in the graph: one BenchmarkItem node per version of an item, linked by
 * EVIDENCE to the sentence or fact versions it rests on and by REVISED_AS to its next version.
 * An item's type at a snapshot is its version's origin when the version began at that snapshot,
 * and UNCHANGED afterwards, so carrying an item over costs no write.
 */
import type { BenchmarkItemRecord, BenchmarkItemType, BenchmarkKind } from '../domain/model.js';
import { int, type CypherRunner } from './database.js';
import { fromNeo4jDateTime, requireDate, toNeo4jDateTime } from './temporal.js';
import { validAtCypher } from './validity.js';

/** An evidence version closed by a snapshot, with the versions that succeeded it there. */
export interface ClosedEvidence {
  id: string;
  /** Sentence successors (REVISED_AS) carry the label they were given; fact successors their change kind. */
  successors: Array<{ id: string; text: string; label: string | null }>;
}

/** A current item version one of whose evidence versions a snapshot closed. */
export interface AffectedItem {
  versionId: string;
  itemId: string;
  kind: BenchmarkKind;
  answers: string[];
  /** Every evidence version in order, with its text; `closed` when this snapshot ended it. */
  evidence: Array<{ id: string; text: string; closed: boolean; successors: ClosedEvidence['successors'] }>;
}

/** A new item version to write: its valid and transaction time are set when it is written, its evidence named by id. */
export type NewItemVersion = Omit<BenchmarkItemRecord, 'evidence' | 'validFrom' | 'validTo' | 'recordedAt'> & {
  /** The sentence versions a question from text (or a dialogue turn) rests on, in order. */
  sentenceIds: string[];
  /** The fact version a fact question rests on. */
  factId: string | null;
};

/** A sentence valid at a snapshot, with what generation needs to know about it. */
export interface SnapshotSentence {
  id: string;
  text: string;
  startsParagraph: boolean;
  /** Its label when it was created; null in its article's first snapshot. */
  origin: string | null;
  /** Whether this snapshot created this version. */
  createdHere: boolean;
  /** For a CHANGED sentence, the text of the version it replaced. */
  previousText: string | null;
}

export interface ArticleAtSnapshot {
  articleId: string;
  title: string;
  sentences: SnapshotSentence[];
}

/** A fact version a snapshot created that a passage valid then states, with the value it replaced. */
export interface NewFactAtSnapshot {
  id: string;
  subject: string;
  title: string;
  attribute: string;
  value: string;
  change: string | null;
  previousValue: string | null;
}

export interface BenchmarkFilter {
  asOf: Date;
  kinds: BenchmarkKind[] | null;
  types: BenchmarkItemType[] | null;
}

export interface BenchmarkSizeRow {
  snapshotId: string;
  takenAt: Date;
  kind: BenchmarkKind;
  type: BenchmarkItemType;
  count: number;
}

type ItemRow = Omit<BenchmarkItemRecord, 'validFrom' | 'validTo' | 'recordedAt' | 'contexts' | 'evidence'> & {
  validFrom: unknown;
  validTo: unknown;
  recordedAt: unknown;
  contexts: string | null;
  evidence: Array<{ id: string; text: string; position: number }>;
  type: BenchmarkItemType;
};

/** Links the item version `v` to the evidence its `row` names: sentences in order, or one fact. */
const LINK_EVIDENCE = `WITH v, row
       CALL (v, row) {
         UNWIND range(0, size(row.sentenceIds) - 1) AS position
         MATCH (s:Sentence {id: row.sentenceIds[position]})
         CREATE (v)-[:EVIDENCE {position: position}]->(s)
       }
       CALL (v, row) {
         MATCH (f:Fact {id: row.factId})
         CREATE (v)-[:EVIDENCE {position: 0}]->(f)
       }`;

/** The type of item version `v` at the snapshot taken at `snapshotAt` (an imported item keeps its own). */
const TYPE_AT = (v: string, snapshotAt: string): string =>
  `CASE WHEN ${v}.kind = 'IMPORTED' OR ${v}.validFrom = ${snapshotAt} THEN ${v}.origin ELSE 'UNCHANGED' END`;

function toRecord(row: { item: ItemRow; type: BenchmarkItemType }): BenchmarkItemRecord & { type: BenchmarkItemType } {
  const { item } = row;
  return {
    ...item,
    type: row.type,
    turn: item.turn ?? null,
    contexts: item.contexts ? (JSON.parse(item.contexts) as BenchmarkItemRecord['contexts']) : [],
    evidence: [...item.evidence].sort((a, b) => a.position - b.position).map(({ id, text }) => ({ id, text })),
    validFrom: requireDate(item.validFrom),
    validTo: fromNeo4jDateTime(item.validTo),
    recordedAt: requireDate(item.recordedAt),
  };
}

export class BenchmarkRepository {
  constructor(private readonly db: CypherRunner) {}

  /** Current item versions that rest on a sentence or fact version the snapshot taken at `at` closed. */
  async affectedBy(at: Date): Promise<AffectedItem[]> {
    return this.db.run<AffectedItem>(
      `CALL () {
         MATCH (s:Sentence) WHERE s.validTo = $at RETURN s AS closed
         UNION
         MATCH (f:Fact) WHERE f.validTo = $at RETURN f AS closed
       }
       MATCH (v:BenchmarkItem)-[:EVIDENCE]->(closed) WHERE v.validTo IS NULL
       WITH DISTINCT v
       MATCH (v)-[r:EVIDENCE]->(e)
       OPTIONAL MATCH (e)-[:REVISED_AS|SUPERSEDED_BY]->(next) WHERE next.validFrom = $at
       WITH v, r, e, next ORDER BY next.orderKey
       WITH v, r, e, collect(CASE WHEN next IS NULL THEN null ELSE {id: next.id, text: coalesce(next.text, next.value), label: coalesce(next.origin, next.change)} END) AS successors
       ORDER BY r.position
       RETURN v.id AS versionId, v.itemId AS itemId, v.kind AS kind, v.answers AS answers,
              collect({id: e.id, text: coalesce(e.text, e.value), closed: e.validTo = $at, successors: successors}) AS evidence`,
      { at: toNeo4jDateTime(at) },
    );
  }

  /** Ends item versions at `at`: they stay in history and leave the current benchmark. */
  async retire(versionIds: string[], at: Date, snapshotId: string): Promise<void> {
    if (versionIds.length === 0) return;
    await this.db.run(
      `UNWIND $ids AS id MATCH (v:BenchmarkItem {id: id}) WHERE v.validTo IS NULL
       SET v.validTo = $at, v.retiredBy = $snapshotId, v.closedAt = datetime()`,
      { ids: versionIds, at: toNeo4jDateTime(at), snapshotId },
    );
  }

  /**
   * Writes new item versions valid from `at`; a version id already written is left as it is, so a
   * re-run after a crash writes nothing twice. Returns how many were written.
   */
  async write(versions: NewItemVersion[], at: Date, snapshotId: string | null): Promise<number> {
    if (versions.length === 0) return 0;
    const rows = await this.db.run<{ created: number }>(
      `UNWIND $rows AS row
       OPTIONAL MATCH (existing:BenchmarkItem {id: row.id})
       WITH row WHERE existing IS NULL
       CREATE (v:BenchmarkItem {id: row.id})
       SET v.itemId = row.itemId, v.kind = row.kind, v.origin = row.origin, v.question = row.question,
         v.answers = row.answers, v.previousAnswers = row.previousAnswers, v.articleId = row.articleId,
         v.dialogueId = row.dialogueId, v.turn = row.turn, v.source = row.source, v.contexts = row.contexts,
         v.snapshotId = $snapshotId, v.validFrom = $at, v.recordedAt = datetime()
       ${LINK_EVIDENCE}
       RETURN count(v) AS created`,
      {
        rows: versions.map((version) => ({
          ...version,
          turn: version.turn === null ? null : int(version.turn),
          contexts: version.contexts.length > 0 ? JSON.stringify(version.contexts) : null,
        })),
        at: toNeo4jDateTime(at),
        snapshotId,
      },
    );
    return rows[0]?.created ?? 0;
  }

  /** Carries current item versions over: each is closed at `at` and replaced by an UNCHANGED version resting on the given evidence. */
  async carry(
    rows: Array<{ versionId: string; newVersionId: string; sentenceIds: string[]; factId: string | null; answers: string[] }>,
    at: Date,
    snapshotId: string,
  ): Promise<void> {
    if (rows.length === 0) return;
    await this.db.run(
      `UNWIND $rows AS row
       MATCH (old:BenchmarkItem {id: row.versionId}) WHERE old.validTo IS NULL
       CREATE (v:BenchmarkItem {id: row.newVersionId})
       SET v += old {.itemId, .kind, .question, .previousAnswers, .articleId, .dialogueId, .turn, .source, .contexts},
           v.answers = row.answers, v.origin = 'UNCHANGED', v.snapshotId = $snapshotId, v.validFrom = $at, v.recordedAt = datetime(),
           old.validTo = $at, old.closedAt = datetime()
       CREATE (old)-[:REVISED_AS]->(v)
       ${LINK_EVIDENCE}`,
      { rows, at: toNeo4jDateTime(at), snapshotId },
    );
  }

  /** Articles with a sentence version created at `at` that is new, changed or in the article's first snapshot, and not yet drafted from. */
  async articlesToDraft(at: Date, snapshotId: string): Promise<string[]> {
    const rows = await this.db.run<{ id: string }>(
      `MATCH (s:Sentence) WHERE s.validFrom = $at AND (s.origin IS NULL OR s.origin IN ['NEW', 'CHANGED'])
       WITH DISTINCT s.articleId AS id
       MATCH (a:Article {id: id}) WHERE coalesce(a.benchmarkDraftedIn, '') <> $snapshotId
       RETURN id ORDER BY id`,
      { at: toNeo4jDateTime(at), snapshotId },
    );
    return rows.map((row) => row.id);
  }

  /** The articles' sentences valid at `at`, in order, with their labels and, for changed ones, the text they replaced. */
  async articlesAt(articleIds: string[], at: Date): Promise<ArticleAtSnapshot[]> {
    return this.db.run<ArticleAtSnapshot>(
      `UNWIND $ids AS id
       MATCH (a:Article {id: id})
       CALL (a) {
         MATCH (a)-[:HAS_SENTENCE]->(s:Sentence) WHERE ${validAtCypher('s')}
         OPTIONAL MATCH (previous:Sentence)-[:REVISED_AS]->(s) WHERE s.origin = 'CHANGED'
         WITH s, head(collect(previous.text)) AS previousText ORDER BY s.orderKey
         RETURN collect({id: s.id, text: s.text, startsParagraph: s.startsParagraph, origin: s.origin,
                         createdHere: s.validFrom = $asOf, previousText: previousText}) AS sentences
       }
       RETURN a.id AS articleId, coalesce(a.title, a.id) AS title, sentences`,
      { ids: articleIds, asOf: toNeo4jDateTime(at) },
    );
  }

  /** Marks articles as drafted from at a snapshot, so a re-run after a crash skips them. */
  async markDrafted(articleIds: string[], snapshotId: string): Promise<void> {
    await this.db.run(`UNWIND $ids AS id MATCH (a:Article {id: id}) SET a.benchmarkDraftedIn = $snapshotId`, { ids: articleIds, snapshotId });
  }

  /** Fact versions created at `at` (NEW, UPDATED, or in the article's first snapshot) that a passage valid then states. */
  async factsToDraft(at: Date): Promise<NewFactAtSnapshot[]> {
    return this.db.run<NewFactAtSnapshot>(
      `MATCH (f:Fact) WHERE f.validFrom = $asOf AND (f.change IS NULL OR f.change IN ['NEW', 'UPDATED'])
       MATCH (a:Article {id: f.subject})
       WHERE EXISTS {
         MATCH (a)-[:HAS_PASSAGE]->(p:Passage) WHERE ${validAtCypher('p')} AND toLower(p.text) CONTAINS toLower(f.value)
       }
       OPTIONAL MATCH (previous:Fact)-[:SUPERSEDED_BY]->(f)
       RETURN f.id AS id, f.subject AS subject, coalesce(a.title, a.id) AS title, f.attribute AS attribute,
              f.value AS value, f.change AS change, previous.value AS previousValue
       ORDER BY id`,
      { asOf: toNeo4jDateTime(at) },
    );
  }

  /** Complete snapshots in date order, with whether their benchmark maintenance has run. */
  async snapshots(): Promise<Array<{ id: string; takenAt: Date; maintained: boolean }>> {
    const rows = await this.db.run<{ id: string; takenAt: unknown; maintained: boolean }>(
      `MATCH (s:Snapshot {status: 'COMPLETE'})
       RETURN s.id AS id, s.takenAt AS takenAt, s.benchmarkMaintainedAt IS NOT NULL AS maintained
       ORDER BY s.takenAt`,
    );
    return rows.map((row) => ({ ...row, takenAt: requireDate(row.takenAt) }));
  }

  async markMaintained(snapshotId: string): Promise<void> {
    await this.db.run(`MATCH (s:Snapshot {id: $id}) SET s.benchmarkMaintainedAt = datetime()`, { id: snapshotId });
  }

  /** One page of the benchmark as of a date, by item id after the cursor, with how many items match in all. */
  async page(
    filter: BenchmarkFilter,
    first: number,
    afterItemId: string | null,
  ): Promise<{ items: Array<BenchmarkItemRecord & { type: BenchmarkItemType }>; total: number; hasNext: boolean }> {
    const params = { asOf: toNeo4jDateTime(filter.asOf), kinds: filter.kinds, types: filter.types, after: afterItemId, limit: int(first + 1) };
    const matching = `CALL () {
         OPTIONAL MATCH (s:Snapshot {status: 'COMPLETE'}) WHERE s.takenAt <= $asOf
         RETURN max(s.takenAt) AS snapshotAt
       }
       MATCH (v:BenchmarkItem) WHERE ${validAtCypher('v')} AND ($kinds IS NULL OR v.kind IN $kinds)
       WITH v, ${TYPE_AT('v', 'snapshotAt')} AS type
       WHERE ($types IS NULL OR type IN $types)`;
    const [counted, rows] = await Promise.all([
      this.db.run<{ total: number }>(`${matching} RETURN count(v) AS total`, params),
      this.db.run<{ item: ItemRow; type: BenchmarkItemType }>(
        `${matching} AND ($after IS NULL OR v.itemId > $after)
         WITH v, type ORDER BY v.itemId LIMIT $limit
         CALL (v) {
           OPTIONAL MATCH (v)-[r:EVIDENCE]->(e)
           RETURN collect(CASE WHEN e IS NULL THEN null ELSE {id: e.id, text: coalesce(e.text, e.attribute + ': ' + e.value), position: r.position} END) AS evidence
         }
         RETURN v {.id, .itemId, .kind, .origin, .question, .answers, .previousAnswers, .articleId, .dialogueId, .turn,
                   .source, .contexts, .validFrom, .validTo, .recordedAt, evidence: evidence} AS item, type`,
        params,
      ),
    ]);
    const items = rows.map(toRecord);
    return { items: items.slice(0, first), total: counted[0]?.total ?? 0, hasNext: items.length > first };
  }

  /** How many items each complete snapshot's benchmark holds, per kind and type (GrowOVER's Table 13). */
  async sizes(): Promise<BenchmarkSizeRow[]> {
    const rows = await this.db.run<Omit<BenchmarkSizeRow, 'takenAt'> & { takenAt: unknown }>(
      `MATCH (s:Snapshot {status: 'COMPLETE'})
       CALL (s) {
         MATCH (v:BenchmarkItem) WHERE v.validFrom <= s.takenAt AND (v.validTo IS NULL OR v.validTo > s.takenAt)
         RETURN v.kind AS kind, ${TYPE_AT('v', 's.takenAt')} AS type, count(*) AS count
       }
       RETURN s.id AS snapshotId, s.takenAt AS takenAt, kind, type, count
       ORDER BY takenAt, kind, type`,
    );
    return rows.map((row) => ({ ...row, takenAt: requireDate(row.takenAt) }));
  }
}
