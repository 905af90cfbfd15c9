/** What `ask` and `batchAsk` accept, checked before anything runs; every refusal names the argument. */
import { isoDay } from '../domain/time.js';
import { RetrievalMode, type AskRequest, type Turn } from './types.js';

export const ASK_LIMITS = { maxQuestionLength: 2000, maxTurns: 20, maxEvidenceIdsPerTurn: 50, minK: 1, maxK: 50, maxBatch: 256 } as const;
export const DEFAULT_K = 3;

export class AskInputError extends Error {
  readonly code = 'BAD_USER_INPUT';

  constructor(
    readonly argument: string,
    message: string,
  ) {
    super(`${argument}: ${message}`);
  }
}

export interface CheckedRequest {
  question: string;
  asOf: Date;
  turns: readonly Turn[];
  mode: RetrievalMode;
  k: number;
}

/** `at` prefixes argument names in errors ("questions[3]."). */
export function checkRequest(request: AskRequest, defaultAsOf: Date, firstSnapshotAt: Date, at: string): CheckedRequest {
  const question = request.question?.trim() ?? '';
  if (question === '') throw new AskInputError(`${at}question`, 'must not be empty');
  if (question.length > ASK_LIMITS.maxQuestionLength)
    throw new AskInputError(`${at}question`, `must be at most ${ASK_LIMITS.maxQuestionLength} characters, got ${question.length}`);
  const k = request.k ?? DEFAULT_K;
  if (!Number.isInteger(k) || k < ASK_LIMITS.minK || k > ASK_LIMITS.maxK)
    throw new AskInputError(`${at}k`, `must be between ${ASK_LIMITS.minK} and ${ASK_LIMITS.maxK}, got ${k}`);
  const asOf = request.asOf ?? defaultAsOf;
  if (asOf.getTime() < firstSnapshotAt.getTime()) {
    throw new AskInputError(`${at}asOf`, `${asOf.toISOString()} is before the first snapshot (${isoDay(firstSnapshotAt)}): nothing is known then`);
  }
  const turns = request.conversation ?? [];
  if (turns.length > ASK_LIMITS.maxTurns) throw new AskInputError(`${at}conversation`, `at most ${ASK_LIMITS.maxTurns} turns, got ${turns.length}`);
  turns.forEach((turn, t) => {
    if (turn.question.trim() === '') throw new AskInputError(`${at}conversation[${t}].question`, 'must not be empty');
    if (turn.question.length > ASK_LIMITS.maxQuestionLength)
      throw new AskInputError(`${at}conversation[${t}].question`, `must be at most ${ASK_LIMITS.maxQuestionLength} characters`);
    if ((turn.answer ?? '').length > ASK_LIMITS.maxQuestionLength)
      throw new AskInputError(`${at}conversation[${t}].answer`, `must be at most ${ASK_LIMITS.maxQuestionLength} characters`);
    if ((turn.evidenceIds ?? []).length > ASK_LIMITS.maxEvidenceIdsPerTurn) {
      throw new AskInputError(
        `${at}conversation[${t}].evidenceIds`,
        `at most ${ASK_LIMITS.maxEvidenceIdsPerTurn} ids per turn, got ${turn.evidenceIds!.length}`,
      );
    }
  });
  return { question, asOf, turns, mode: request.retrieval ?? RetrievalMode.ADAPTIVE, k };
}
