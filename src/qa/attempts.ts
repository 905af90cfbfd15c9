/**
 * The stages of `ask` after planning, each from one read-only record to the next: an attempt is
 * a plan with the evidence gathered for it (rounds), the candidate answers read from that
 * evidence and the one chosen. Gathering (a first round of hybrid retrieval, or the
 * conversation's evidence, or none), reading (the generator), gating (GrowOVER's certainty
 * classifier) and adaptive re-retrieval each take attempts and give back new ones.
 */
import { queryTerms, SearchMode, SearchUnit } from '../retrieval/retriever.js';
import { f1Score } from './answerMetrics.js';
import { gateFeatures } from './certaintyGate.js';
import { documentEvidence, factEvidence, hitEvidence } from './evidence.js';
import type { InstantPlan } from './planning.js';
import type { AnsweringPorts, Gate } from './ports.js';
import { EvidenceKind, RetrievalMode, type Evidence, type RetrievalRound, type ScoredCandidate } from './types.js';

/** A candidate with the gate's feature row (kept for training the gate) and the reader's raw score. */
export interface GatedCandidate extends ScoredCandidate {
  readonly features: readonly number[];
  readonly readerScore: number | null;
}

export interface Attempt {
  readonly plan: InstantPlan;
  readonly rounds: readonly RetrievalRound[];
  readonly candidates: readonly GatedCandidate[];
  readonly chosen: GatedCandidate | null;
}

export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/** Runs `stage` on groups of items and puts what it returns back in the items' order. */
async function inGroups<T, R>(items: readonly T[], key: (item: T) => string, stage: (group: T[]) => Promise<R[]>): Promise<R[]> {
  const out = new Array<R>(items.length);
  const positions = new Map(items.map((item, i) => [item, i]));
  await Promise.all(
    [...groupBy(items, key).values()].map(async (group) => {
      const results = await stage(group);
      group.forEach((item, i) => (out[positions.get(item)!] = results[i]!));
    }),
  );
  return out;
}

export function blankCandidate(evidence: Evidence): GatedCandidate {
  return { evidence, answer: '', generatorConfidence: 0, certainty: null, features: [], readerScore: null };
}

export const attemptOf = (plan: InstantPlan, candidates: readonly GatedCandidate[] = [], rounds: readonly RetrievalRound[] = []): Attempt => ({
  plan,
  rounds,
  candidates,
  chosen: null,
});

/** A closed-book answer from a generator's own knowledge has no document; it is shown as of the generator's knowledge. */
function closedBookEvidence(plan: InstantPlan): Evidence {
  return documentEvidence({
    kind: EvidenceKind.FACT,
    id: `closed-book:${plan.generator.name}`,
    articleId: '',
    text: `${plan.generator.name} without retrieval`,
    validFrom: plan.asOf,
    validTo: null,
  });
}

/**
 * The generator alone. An extractive generator remembers the asked fact as it stood at its
 * cutoff, which the gate weighs as a fact; NEVER (the generator-alone baseline) is not gated.
 */
export async function answerClosedBook(plans: readonly InstantPlan[], gate: Gate | null): Promise<Attempt[]> {
  const answered = await inGroups(
    plans,
    (plan) => plan.generator.name,
    async (group) => {
      const memories = group.map((plan) => (plan.memoryFact ? factEvidence(plan.memoryFact, 0) : null));
      const generations = await group[0]!.generator.generate(group.map((plan, i) => ({ question: plan.question, evidence: null, memory: memories[i] })));
      return group.map((plan, i): Attempt => {
        const { answer, confidence, score } = generations[i]!;
        const chosen =
          memories[i] || answer
            ? { ...blankCandidate(memories[i] ?? closedBookEvidence(plan)), answer, generatorConfidence: confidence, readerScore: score }
            : null;
        return { plan, rounds: [], candidates: chosen ? [chosen] : [], chosen };
      });
    },
  );
  const gated = answered.filter((attempt) => attempt.plan.mode !== RetrievalMode.NEVER && attempt.plan.memoryFact !== null);
  const scored = await gateCandidates(gated, gate);
  return answered.map((attempt) => {
    const after = scored[gated.indexOf(attempt)];
    return after ? { ...after, chosen: after.candidates[0] ?? null } : attempt;
  });
}

/**
 * The question's vector from the reader, when it is exactly what the retriever would compute:
 * one encoder for both, a question searched as it stands (no conversation summary, not shortened).
 */
function retrievalVector(plan: InstantPlan, ports: Pick<AnsweringPorts, 'encoder' | 'search'>): Float32Array | null {
  const shared = ports.encoder.encoderId === ports.search.embedderId;
  return shared && plan.query === plan.question.text && queryTerms(plan.query) === plan.query ? plan.vector : null;
}

/** The first round of retrieval: one hybrid search per asOf and k for a batch, the top k passages valid then. */
export async function firstRound(
  plans: readonly InstantPlan[],
  ports: Pick<AnsweringPorts, 'encoder' | 'search'>,
): Promise<Array<{ plan: InstantPlan; round: RetrievalRound }>> {
  return inGroups(
    plans,
    (plan) => `${plan.asOf.toISOString()}|${plan.k}`,
    async (group) => {
      const hits = await ports.search.batchSearch(
        group.map((plan) => plan.query),
        {
          asOf: group[0]!.asOf,
          k: group[0]!.k,
          mode: SearchMode.HYBRID,
          unit: SearchUnit.PASSAGE,
          queryVectors: group.map((plan) => retrievalVector(plan, ports)),
        },
      );
      return group.map((plan, i) => ({ plan, round: { round: 1, query: plan.query, omega: 0, hits: hits[i]!.map((hit) => hitEvidence(hit, 1)) } }));
    },
  );
}

/** One candidate per passage of the first round, and the asked fact beside them (the RaLM baseline reads passages only). */
export function firstRoundAttempt(plan: InstantPlan, round: RetrievalRound, factCandidates: boolean): Attempt {
  const withFact = plan.factMatch && plan.mode !== RetrievalMode.ALWAYS && factCandidates ? [factEvidence(plan.factMatch.fact, 1)] : [];
  return attemptOf(
    plan,
    [...round.hits, ...withFact].map((evidence) => blankCandidate(evidence)),
    [round],
  );
}

/** The generator's answer for every candidate still to be read (of `round`, when given). */
export async function readCandidates(attempts: readonly Attempt[], round?: number): Promise<Attempt[]> {
  const pending = attempts.flatMap((attempt) =>
    attempt.candidates.filter((c) => round === undefined || c.evidence.round === round).map((candidate) => ({ attempt, candidate })),
  );
  const read = new Map<GatedCandidate, GatedCandidate>();
  await inGroups(
    pending,
    ({ attempt }) => attempt.plan.generator.name,
    async (group) => {
      const generations = await group[0]!.attempt.plan.generator.generate(
        group.map(({ attempt, candidate }) => ({ question: attempt.plan.question, evidence: candidate.evidence })),
      );
      group.forEach(({ candidate }, i) => {
        const { answer, confidence, score } = generations[i]!;
        read.set(candidate, { ...candidate, answer, generatorConfidence: confidence, readerScore: score });
      });
      return group;
    },
  );
  return attempts.map((attempt) => ({ ...attempt, candidates: attempt.candidates.map((candidate) => read.get(candidate) ?? candidate) }));
}

/** Every candidate's gate features (each seen beside its question's other candidates) and its certainty. */
export async function gateCandidates(attempts: readonly Attempt[], gate: Gate | null): Promise<Attempt[]> {
  const featured = attempts.map((attempt) => {
    const { plan, candidates } = attempt;
    const maxLexicalScore = Math.max(0, ...candidates.map((c) => c.evidence.lexicalScore ?? 0));
    return {
      ...attempt,
      candidates: candidates.map((candidate): GatedCandidate => {
        const others = candidates.filter((other) => other !== candidate);
        const readerScores = others.flatMap((other) => (other.readerScore === null ? [] : [other.readerScore]));
        const subject = plan.subjects.find((s) => s.articleId === candidate.evidence.articleId);
        const features = gateFeatures({
          question: plan.question,
          names: [...plan.names],
          evidence: candidate.evidence,
          answer: candidate.answer,
          generatorConfidence: candidate.generatorConfidence,
          readerScore: candidate.readerScore,
          otherReaderScore: readerScores.length === 0 ? null : Math.max(...readerScores),
          otherAnswers: others.map((other) => other.answer),
          factMatch: plan.factMatch,
          formerValues: [...plan.formerValues],
          subjectCoverage: subject?.coverage ?? 0,
          subjectWords: subject?.words ?? [],
          profile: plan.profiles.get(candidate.evidence.articleId),
          asOf: plan.asOf,
          timeSensitive: plan.decision.timeSensitive,
          maxLexicalScore,
        });
        return { ...candidate, features };
      }),
    };
  });
  return gate ? scoredBy(gate, featured, (attempt) => attempt.candidates.map((candidate) => [...candidate.features])) : featured;
}

/** Every candidate's certainty from one gate call over all attempts' rows (`rowsOf`: one row per candidate, in order). */
export async function scoredBy(gate: Gate, attempts: readonly Attempt[], rowsOf: (attempt: Attempt) => number[][]): Promise<Attempt[]> {
  const certainties = await gate.score(attempts.flatMap(rowsOf));
  let next = 0;
  return attempts.map((attempt) => ({ ...attempt, candidates: attempt.candidates.map((candidate) => ({ ...candidate, certainty: certainties[next++]! })) }));
}

export function bestByReliability(candidates: readonly GatedCandidate[]): GatedCandidate | null {
  let best: GatedCandidate | null = null;
  for (const candidate of candidates) {
    if (candidate.answer === '') continue;
    if (best === null || (candidate.certainty?.reliable ?? 0) > (best.certainty?.reliable ?? 0)) best = candidate;
  }
  return best;
}

/**
 * The candidate answered with: ALWAYS takes the top passage's, the others the one the gate trusts
 * most. A span of text that names the asked fact's value, a name, with more words around it ("Ruth
 * Chepngetich of Kenya", where the record holder is "Ruth Chepngetich") is cut to the value: the
 * fact says where the name ends. Not where a capitalised word follows it, which continues the name
 * ("Kenya Moore", "Ruth Chepngetich Jr").
 */
export function choose(attempt: Attempt): Attempt {
  const best =
    attempt.plan.mode === RetrievalMode.ALWAYS ? (attempt.candidates.find((c) => c.evidence.rank === 1) ?? null) : bestByReliability(answering(attempt));
  const value = attempt.plan.factMatch?.fact.value;
  const cut = best && value ? cutToName(best, value) : best;
  if (cut === best) return { ...attempt, chosen: best };
  return { ...attempt, candidates: attempt.candidates.map((candidate) => (candidate === best ? cut! : candidate)), chosen: cut };
}

/** The candidates that may answer: not the thing the question names by a fact ("the ChatGPT developer"), while others remain. */
function answering(attempt: Attempt): readonly GatedCandidate[] {
  const described = attempt.plan.described?.value;
  if (!described) return attempt.candidates;
  const others = attempt.candidates.filter((candidate) => candidate.answer !== '' && !isDescribed(candidate.answer, described));
  return others.length > 0 ? others : attempt.candidates;
}

/** Whether an answer is the value the question names its subject by. */
export function isDescribed(answer: string, described: string): boolean {
  return f1Score(answer, [described]) >= 0.5;
}

function cutToName(candidate: GatedCandidate, name: string): GatedCandidate {
  if (candidate.evidence.kind === EvidenceKind.FACT || !/^\p{Lu}/u.test(name) || candidate.answer.length <= name.length) return candidate;
  const { answer } = candidate;
  for (let at = answer.indexOf(name); at >= 0; at = answer.indexOf(name, at + 1)) {
    const [before, after] = [answer.slice(0, at), answer.slice(at + name.length)];
    if (!/[\p{L}\p{N}]$/u.test(before) && !/^[\p{L}\p{N}]|^\s+\p{Lu}/u.test(after)) return { ...candidate, answer: name };
  }
  return candidate;
}

export function isAdopted(gate: Gate | null, candidate: GatedCandidate | null): boolean {
  return gate !== null && candidate !== null && candidate.answer !== '' && gate.adopts(candidate.evidence, candidate.certainty);
}

/**
 * GrowOVER's adaptive re-retrieval for attempts whose answer is not adopted: a second search with
 * the query moved toward the first answer, ω = λ·p(reliable), the first round's passages left
 * out; the second round's candidates are read and everything is gated again. The more reliable
 * round's best candidate wins (the second only when strictly more reliable).
 */
export async function reRetrieve(attempts: readonly Attempt[], ports: Pick<AnsweringPorts, 'encoder' | 'search' | 'gate'>): Promise<Attempt[]> {
  const gate = ports.gate;
  if (attempts.length === 0 || gate === null) return [...attempts];
  const extended = await inGroups(
    attempts,
    ({ plan }) => `${plan.asOf.toISOString()}|${plan.k}`,
    async (group) => {
      const omegas = group.map(({ chosen }) => Math.min(1, Math.max(0, gate.lambda * (chosen?.certainty?.reliable ?? 0))));
      const hits = await ports.search.reRetrieve(
        group.map(({ plan, chosen, rounds }, i) => ({
          question: plan.question.text,
          answer: chosen?.answer ?? '',
          omega: omegas[i]!,
          excludeRowIds: rounds[0]!.hits.flatMap((hit) => (hit.rowId === null ? [] : [hit.rowId])),
          questionVector: retrievalVector(plan, ports),
        })),
        group[0]!.plan.asOf,
        group[0]!.plan.k,
      );
      return group.map((attempt, i): Attempt => {
        const evidence = hits[i]!.map((hit) => hitEvidence(hit, 2));
        const round = { round: 2, query: `${attempt.plan.question.text} : ${attempt.chosen?.answer ?? ''}`, omega: omegas[i]!, hits: evidence };
        return { ...attempt, rounds: [...attempt.rounds, round], candidates: [...attempt.candidates, ...evidence.map((e) => blankCandidate(e))] };
      });
    },
  );
  const gated = await gateCandidates(await readCandidates(extended, 2), gate);
  return gated.map((attempt, a) => {
    // The first round's best, as the gate sees it now that the second round's candidates are beside it.
    const firstIndex = attempts[a]!.chosen ? attempts[a]!.candidates.indexOf(attempts[a]!.chosen!) : -1;
    const first = firstIndex >= 0 ? attempt.candidates[firstIndex]! : null;
    const second = bestByReliability(attempt.candidates.filter((c) => c.evidence.round === 2));
    const chosen = second && (first === null || (second.certainty?.reliable ?? 0) > (first.certainty?.reliable ?? 0)) ? second : first;
    return { ...attempt, chosen };
  });
}
