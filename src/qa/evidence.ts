/** The documents answers are drawn from, as the answering pipeline hands them out. */
import type { FactRecord } from '../domain/model.js';
import { SearchUnit, type SearchHit } from '../retrieval/retriever.js';
import { EvidenceKind, type Evidence } from './types.js';

/** A document as evidence; what no retrieval round gave it (value, row, rank, scores) is null, its round 0. */
export function documentEvidence(fields: Pick<Evidence, 'kind' | 'id' | 'articleId' | 'text' | 'validFrom' | 'validTo'> & Partial<Evidence>): Evidence {
  return { value: null, rowId: null, round: 0, rank: null, denseScore: null, lexicalScore: null, fusedScore: null, statedTime: null, ...fields };
}

/** Whether evidence is a reading of a period: the words a time fitting it governs, not a passage read beside the readings. */
export const isReading = (evidence: Evidence): boolean => evidence.statedTime !== null;

export function factEvidence(fact: FactRecord, round: number): Evidence {
  const { id, subject, attribute, value, validFrom, validTo } = fact;
  return documentEvidence({ kind: EvidenceKind.FACT, id, articleId: subject, text: `${subject} · ${attribute}: ${value}`, value, validFrom, validTo, round });
}

export function hitEvidence(hit: SearchHit, round: number): Evidence {
  return documentEvidence({
    kind: hit.unit === SearchUnit.SENTENCE ? EvidenceKind.SENTENCE : EvidenceKind.PASSAGE,
    id: hit.id,
    articleId: hit.articleId,
    text: hit.text,
    validFrom: hit.validFrom,
    validTo: hit.validTo,
    rowId: hit.rowId,
    round,
    rank: hit.rank,
    denseScore: hit.denseScore,
    lexicalScore: hit.lexicalScore,
    fusedScore: hit.score,
  });
}
