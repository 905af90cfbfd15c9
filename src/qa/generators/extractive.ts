/**
 * The local, deterministic generator: a fact's value when the document is a fact, otherwise
 * the passage span the span scorer ranks highest. Closed book, it knows the facts as they
 * stood at its knowledge cutoff and nothing else.
 */
import { SpanScorer, spanCandidates } from '../spanScorer.js';
import { EvidenceKind } from '../types.js';
import type { Generation, GenerationInput, Generator } from './types.js';

const NO_ANSWER: Generation = { answer: '', confidence: 0 };

export class ExtractiveGenerator implements Generator {
  readonly name = 'extractive';

  constructor(private readonly scorer: SpanScorer = SpanScorer.fromModel()) {}

  async generate(inputs: readonly GenerationInput[]): Promise<Generation[]> {
    const documents = inputs.map((input) => input.evidence ?? input.memory ?? null);
    const candidates = documents.map((document, i) =>
      document === null || document.kind === EvidenceKind.FACT ? [] : spanCandidates(inputs[i]!.question, document.text),
    );
    const scores = await this.scorer.score(candidates);
    return documents.map((document, i): Generation => {
      if (document === null) return NO_ANSWER;
      if (document.kind === EvidenceKind.FACT) return { answer: document.value ?? '', confidence: 1 };
      let best = -1;
      scores[i]!.forEach((score, c) => {
        if (best < 0 || score > scores[i]![best]!) best = c;
      });
      return best < 0 ? NO_ANSWER : { answer: candidates[i]![best]!.text, confidence: scores[i]![best]! };
    });
  }
}
