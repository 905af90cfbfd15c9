/**
 * The local, deterministic generator: a fact's value when the document is a fact, otherwise
 * the passage span the reader finds. Closed book, it knows the facts as they stood at its
 * knowledge cutoff and nothing else.
 */
import type { SpanReader } from '../reader/spanReader.js';
import { EvidenceKind } from '../types.js';
import type { Generation, GenerationInput, Generator } from './types.js';

const NO_ANSWER: Generation = { answer: '', confidence: 0, score: null };

export class ExtractiveGenerator implements Generator {
  readonly name = 'extractive';

  constructor(private readonly reader: SpanReader) {}

  async generate(inputs: readonly GenerationInput[]): Promise<Generation[]> {
    const documents = inputs.map((input) => input.evidence ?? input.memory ?? null);
    const passages = documents.flatMap((document, i) => (document !== null && document.kind !== EvidenceKind.FACT ? [i] : []));
    const spans = await this.reader.read(passages.map((i) => ({ question: inputs[i]!.question, text: documents[i]!.text })));
    const read = new Map(passages.map((i, p) => [i, spans[p]]));
    return documents.map((document, i): Generation => {
      if (document === null) return NO_ANSWER;
      if (document.kind === EvidenceKind.FACT) return { answer: document.value ?? '', confidence: 1, score: null };
      const span = read.get(i);
      return span ? { answer: span.text, confidence: span.probability, score: span.score } : NO_ANSWER;
    });
  }
}
