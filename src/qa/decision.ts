/**
 * Whether a question needs retrieval (RetrievalQA / TA-ARE, made exact by the graph): the
 * generator knows the world as of its knowledge cutoff, so a question is answered without
 * retrieval only when the generator's knowledge answers it and the graph says nothing it asks
 * about changed between the cutoff and asOf. Every reason is listed as a cue.
 */
import type { ChangeProfile } from '../graph/answeringRepository.js';
import type { FactRecord } from '../domain/model.js';
import { isoDay } from '../domain/time.js';
import type { QuestionAnalysis } from './question.js';
import type { LinkedSubject } from './subjects.js';
import { DecisionAction, type Decision } from './types.js';

export interface DecisionInput {
  question: QuestionAnalysis;
  asOf: Date;
  cutoff: Date;
  subjects: readonly LinkedSubject[];
  profiles: ReadonlyMap<string, ChangeProfile>;
  /** The fact the question asks for, as known at the cutoff (the generator's memory); null when none matched. */
  memoryFact: FactRecord | null;
  /** Whether the generator is a closed-book model with knowledge of its own (it may answer without a matched fact). */
  generatorHasOwnKnowledge: boolean;
  /** Proper names of the question that no article is titled with: the long tail. */
  unknownNames: readonly string[];
}

/** Two versions of one fact: the same attribute of the same subject, whatever its value. */
export function sameSubjectAndAttribute(a: FactRecord, b: FactRecord): boolean {
  return a.subject === b.subject && a.attribute === b.attribute;
}

export function decideRetrieval(input: DecisionInput): Decision {
  const { question, asOf, cutoff, subjects, profiles, memoryFact } = input;
  const cues: string[] = [];
  const needs: string[] = [];
  const changedSince = subjects.flatMap((subject) => profiles.get(subject.articleId)?.changedFacts ?? []);
  for (const cue of question.temporalCues) cues.push(`temporal cue "${cue}"`);
  const laterYears = question.years.filter((year) => year > cutoff.getUTCFullYear());
  if (laterYears.length > 0) needs.push(`names ${laterYears.join(', ')}, after the knowledge cutoff ${isoDay(cutoff)}`);
  if (asOf.getTime() > cutoff.getTime()) cues.push(`asOf ${isoDay(asOf)} is after the knowledge cutoff ${isoDay(cutoff)}`);
  else if (asOf.getTime() < cutoff.getTime()) cues.push(`asOf ${isoDay(asOf)} is before the knowledge cutoff ${isoDay(cutoff)}`);
  if (subjects.length === 0) needs.push('no article is named in the question');
  for (const name of input.unknownNames) needs.push(`long tail: "${name}" is not an article`);

  for (const subject of subjects) {
    const profile = profiles.get(subject.articleId);
    if (!profile) continue;
    const facts = profile.changedFacts.map(
      (fact) => `${fact.attribute} (${isoDay(fact.validTo !== null && fact.validTo <= asOf ? fact.validTo : fact.validFrom)})`,
    );
    if (facts.length > 0) cues.push(`${subject.title}: facts changed between cutoff and asOf: ${[...new Set(facts)].join(', ')}`);
    if (profile.sentenceChanges > 0) cues.push(`${subject.title}: ${profile.sentenceChanges} sentence changes between cutoff and asOf`);
    if (profile.added) needs.push(`${subject.title} was first stored between cutoff and asOf`);
  }
  if (memoryFact !== null) {
    // The graph knows exactly whether the asked fact changed; other changes of the article do not matter.
    const changed = changedSince.some((fact) => sameSubjectAndAttribute(fact, memoryFact));
    if (changed) needs.push(`the asked fact "${memoryFact.attribute}" of ${memoryFact.subject} changed after the cutoff`);
    else cues.push(`the generator's knowledge holds "${memoryFact.attribute}" of ${memoryFact.subject}, unchanged since`);
  } else if (subjects.length > 0) {
    const changedArticles = subjects.filter((subject) => {
      const profile = profiles.get(subject.articleId);
      return profile !== undefined && (profile.changedFacts.length > 0 || profile.sentenceChanges > 0);
    });
    if (changedArticles.length > 0) needs.push(`${changedArticles.map((s) => s.title).join(', ')} changed after the cutoff`);
    if (!input.generatorHasOwnKnowledge) needs.push("the generator's knowledge has no fact for the question");
  }
  if (question.asksForEarlier) cues.push('asks for an earlier value');
  const timeSensitive = question.temporalCues.length > 0 || laterYears.length > 0 || changedSince.length > 0;
  return {
    action: needs.length > 0 ? DecisionAction.RETRIEVE : DecisionAction.NO_RETRIEVE,
    timeSensitive,
    cues: [...needs, ...cues],
    changedSince,
  };
}
