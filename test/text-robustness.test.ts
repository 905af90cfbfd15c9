/**
 * No text makes the annotation and span code throw: real paragraphs cut at every token (a
 * retrieved sentence often ends mid-phrase, "She studied at the University of"), and arbitrary
 * Unicode, lone surrogates and control characters included.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { projectRoot } from '../src/paths.js';
import { analyseQuestion } from '../src/qa/question.js';
import { spanCandidates } from '../src/qa/spanScorer.js';
import { readQaFile } from '../src/retrieval/evaluation.js';
import { annotate, candidateSpans } from '../src/text/annotation.js';

/** Everything the answerers derive from a text with the question's help. */
function readEverything(question: string, text: string): number {
  let spans = 0;
  annotate(text).forEach((sentence, s) => {
    for (const span of candidateSpans(sentence, s)) {
      assert.ok(span.start < span.end && span.end <= sentence.tokens.length, `span ${span.start}..${span.end} outside "${sentence.text}"`);
      spans++;
    }
  });
  for (const candidate of spanCandidates(analyseQuestion(question), text)) {
    assert.ok(candidate.features.every(Number.isFinite), `non-finite feature for "${candidate.text}" in "${text}"`);
  }
  return spans;
}

describe('text robustness', () => {
  it('the crash of a sentence ending in a name connector is gone', () => {
    const [sentence] = annotate('She studied at the University of');
    assert.deepEqual(candidateSpans(sentence!, 0).map((span) => span.text), ['University']);
    for (const text of ['of', 'The Bank of', 'Subutai and', 'Manning -', '34 –']) readEverything('Who?', text);
  });

  it('every SQuAD dev paragraph, each sentence cut after every token and the paragraph after every sentence', { timeout: 300_000 }, async () => {
    const items = await readQaFile(join(projectRoot(), 'data', 'squad', 'squad-dev-subset.jsonl.gz'));
    const paragraphs = new Map(items.map((item) => [item.documents[0]!.text, item.question]));
    let cuts = 0;
    for (const [text, question] of paragraphs) {
      const sentences = annotate(text);
      let prefix = '';
      for (const sentence of sentences) {
        for (let end = 1; end <= sentence.tokens.length; end++) {
          readEverything(question, sentence.tokens.slice(0, end).map((token, i) => (i === 0 ? token.text : token.space + token.text)).join(''));
          cuts++;
        }
        prefix = prefix === '' ? sentence.text : `${prefix} ${sentence.text}`;
        readEverything(question, prefix);
      }
    }
    assert.equal(paragraphs.size, 913);
    assert.ok(cuts > 100_000, `${cuts} cuts`);
  });

  it('arbitrary Unicode, lone surrogates and control characters', { timeout: 120_000 }, () => {
    const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
    const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: anyCodeUnit, maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 120 }));
    fc.assert(
      fc.property(text, text, (question, passage) => {
        readEverything(question, passage);
      }),
      { numRuns: 3000, seed: 20261124 },
    );
  });
});
