/**
 * A question about a period is answered at each instant where the store's versions can differ
 * inside it; this merges those answers: consecutive instants with the same answer form one run
 * with the part of the period it held, and the main answer is chosen as the scope asks (the one
 * that held longest, the first or the last), adopted answers before unadopted ones.
 */
import { normalizeAnswer } from '../text/normalize.js';
import type { ScopeInstants } from './timeScope.js';
import type { Certainty, Evidence, ScopedAnswer } from './types.js';

export interface InstantAnswer {
  instant: Date;
  guess: string | null;
  adopted: boolean;
  certainty: Certainty | null;
  evidence: Evidence | null;
}

interface Run extends ScopedAnswer {
  key: string;
  /** The instant whose answer stands for the run (its most reliable). */
  representative: number;
}

/**
 * Which instant's result is the main answer, and the other answers with when they held (`all`:
 * every answer given, the main one too). `end` closes the last instant's interval.
 */
export function mergeScopedAnswers(
  answers: readonly InstantAnswer[],
  end: Date,
  main: ScopeInstants['main'],
): { main: number; others: ScopedAnswer[]; all: ScopedAnswer[] } {
  const runs: Run[] = [];
  answers.forEach((answer, i) => {
    const key = normalizeAnswer(answer.guess ?? '');
    const to = answers[i + 1]?.instant ?? new Date(Math.max(end.getTime(), answer.instant.getTime()));
    const last = runs[runs.length - 1];
    if (last && last.key === key) {
      last.to = to;
      last.adopted ||= answer.adopted;
      if ((answer.certainty?.reliable ?? 0) > (last.certainty?.reliable ?? 0))
        Object.assign(last, { certainty: answer.certainty, evidence: answer.evidence, representative: i });
      return;
    }
    runs.push({
      key,
      text: answer.guess ?? '',
      adopted: answer.adopted,
      certainty: answer.certainty,
      from: answer.instant,
      to,
      evidence: answer.evidence,
      representative: i,
    });
  });
  const answered = runs.filter((run) => run.key !== '');
  const scoped = (list: Run[]): ScopedAnswer[] => list.map(({ key: _key, representative: _representative, ...run }) => run);
  const pool = answered.some((run) => run.adopted) ? answered.filter((run) => run.adopted) : answered;
  if (pool.length === 0) return { main: answers.length - 1, others: [], all: [] };
  const held = new Map<string, number>();
  for (const run of pool) held.set(run.key, (held.get(run.key) ?? 0) + run.to.getTime() - run.from.getTime());
  const chosen =
    main === 'first'
      ? pool[0]!
      : main === 'last'
        ? pool[pool.length - 1]!
        : pool.reduce((best, run) => (held.get(run.key)! >= held.get(best.key)! ? run : best));
  return { main: chosen.representative, others: scoped(answered.filter((run) => run.key !== chosen.key)), all: scoped(answered) };
}
