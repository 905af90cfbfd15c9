/**
 * Corpus BLEU-4 (Papineni et al., 2002) with one reference per hypothesis, on SQuAD-normalised
 * tokens: clipped n-gram precisions summed over the corpus, their geometric mean, and the
 * brevity penalty exp(1 − r/c) when the hypotheses are shorter than the references. GrowOVER
 * scores dialogue replies with it.
 */
import { normalizeAnswer } from '../../src/text/normalize.js';

const MAX_ORDER = 4;

function ngrams(tokens: readonly string[], order: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let start = 0; start + order <= tokens.length; start++) {
    const gram = tokens.slice(start, start + order).join(' ');
    counts.set(gram, (counts.get(gram) ?? 0) + 1);
  }
  return counts;
}

/** BLEU-4 of the hypotheses against their references, from 0 to 100; 0 when some order has no match. */
export function corpusBleu(pairs: ReadonlyArray<{ hypothesis: string; reference: string }>): number {
  const matched = new Array<number>(MAX_ORDER).fill(0);
  const total = new Array<number>(MAX_ORDER).fill(0);
  let hypothesisLength = 0;
  let referenceLength = 0;
  for (const { hypothesis, reference } of pairs) {
    const hypothesisTokens = normalizeAnswer(hypothesis).split(' ').filter(Boolean);
    const referenceTokens = normalizeAnswer(reference).split(' ').filter(Boolean);
    hypothesisLength += hypothesisTokens.length;
    referenceLength += referenceTokens.length;
    for (let order = 1; order <= MAX_ORDER; order++) {
      const referenceGrams = ngrams(referenceTokens, order);
      for (const [gram, count] of ngrams(hypothesisTokens, order)) matched[order - 1]! += Math.min(count, referenceGrams.get(gram) ?? 0);
      total[order - 1]! += Math.max(0, hypothesisTokens.length - order + 1);
    }
  }
  if (hypothesisLength === 0 || matched.some((count) => count === 0)) return 0;
  const logPrecision = matched.reduce((sum, count, i) => sum + Math.log(count / total[i]!), 0) / MAX_ORDER;
  const brevity = hypothesisLength >= referenceLength ? 1 : Math.exp(1 - referenceLength / hypothesisLength);
  return 100 * brevity * Math.exp(logPrecision);
}
