/**
 * Follow-up questions (SELF-multi-RAG): a turn is read together with the conversation before
 * it, retrieval uses a summary of the conversation, and the evidence of earlier turns may
 * already answer the new one (CONTINUE_WITH_EVIDENCE).
 */
import type { FactRecord } from '../domain/model.js';
import { annotate, AnswerType, candidateSpans } from '../text/annotation.js';
import { analyseQuestion, type QuestionAnalysis } from './question.js';
import { EvidenceKind, type Evidence, type Turn } from './types.js';

/** Salient names and noun phrases of a conversation's earlier turns: what a follow-up refers back to. */
export function conversationSummary(turns: readonly Turn[]): string {
  const phrases = new Set<string>();
  for (const turn of turns) {
    for (const text of [turn.question, turn.answer ?? '']) {
      annotate(text).forEach((sentence, s) => {
        for (const span of candidateSpans(sentence, s))
          if (span.form === 'whole' && (span.types.has(AnswerType.NAME) || span.types.has(AnswerType.THING))) phrases.add(span.text);
      });
    }
  }
  return [...phrases].join(' ');
}

/** The question read together with the conversation: its words, and the earlier turn's answer type for a fragment ("And before that?"). */
export function analyseInConversation(analysis: QuestionAnalysis, turns: readonly Turn[]): QuestionAnalysis {
  if (turns.length === 0) return analysis;
  const previous = analyseQuestion(turns[turns.length - 1]!.question);
  const hasWhWord = /\b(who|whom|whose|what|which|when|where|how)\b/i.test(analysis.text);
  return {
    ...analysis,
    answerType: hasWhWord ? analysis.answerType : previous.answerType,
    terms: new Set([...previous.terms, ...analysis.terms]),
  };
}

/** Two versions of one fact: their ids differ only in the snapshot part (`subject#attribute#snapshot`). */
function sameFact(a: string, b: string): boolean {
  return a.slice(0, a.lastIndexOf('#')) === b.slice(0, b.lastIndexOf('#'));
}

/**
 * Whether a conversation's earlier evidence answers the new turn: a fact it holds is the one
 * asked (or, for "before that", the graph's previous version of it), or its passages hold the
 * turn's words and a span of the expected answer type.
 */
export function continuation(
  question: QuestionAnalysis,
  evidence: Evidence[],
  askedFact: FactRecord | null,
  factEvidence: (fact: FactRecord) => Evidence,
): { covered: boolean; evidence: Evidence[]; cues: string[] } {
  if (evidence.length === 0) return { covered: false, evidence, cues: ['no evidence from earlier turns'] };
  const facts = evidence.filter((e) => e.kind === EvidenceKind.FACT);
  if (askedFact && facts.some((fact) => sameFact(fact.id, askedFact.id))) {
    const cue = question.asksForEarlier
      ? `earlier turns' fact has a previous version: ${askedFact.value}`
      : `earlier turns' evidence holds ${askedFact.attribute}`;
    return { covered: true, evidence: [factEvidence(askedFact), ...evidence.filter((e) => e.kind !== EvidenceKind.FACT)], cues: [cue] };
  }
  if (askedFact)
    return { covered: false, evidence, cues: [`asks for ${askedFact.attribute} of ${askedFact.subject}, which the earlier evidence does not hold`] };
  let best = 0;
  let typed = false;
  for (const item of evidence.filter((e) => e.kind !== EvidenceKind.FACT)) {
    const sentences = annotate(item.text);
    const stems = new Set(sentences.flatMap((s) => s.tokens.map((t) => t.stem)));
    const held = question.terms.size === 0 ? 0 : [...question.terms].filter((term) => stems.has(term)).length / question.terms.size;
    best = Math.max(best, held);
    typed ||= sentences.some((sentence, s) => candidateSpans(sentence, s).some((span) => span.types.has(question.answerType)));
  }
  const covered = best >= 0.6 && typed && !question.asksForEarlier && !question.neighbour;
  return {
    covered,
    evidence,
    cues: [`earlier evidence covers ${Math.round(best * 100)}% of the turn's words${typed ? '' : ', with no answer of the expected type'}`],
  };
}
