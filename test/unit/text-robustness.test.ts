/**
 * No text makes the annotation, question reading and reader code throw: real paragraphs cut at
 * every token (a retrieved sentence often ends mid-phrase, "She studied at the University of"),
 * and arbitrary Unicode, lone surrogates and control characters included.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readEverything } from '../support/textFuzz.js';
import fc from 'fast-check';
import { modelsDir } from '../../src/platform/paths.js';
import { analyseQuestion } from '../../src/qa/question.js';
import { SpanReader } from '../../src/qa/reader/spanReader.js';
import { annotate, candidateSpans } from '../../src/text/annotation.js';
import { loadConfig } from '../../src/app/config.js';

describe('text robustness', () => {
  it('the crash of a sentence ending in a name connector is gone', () => {
    const [sentence] = annotate('She studied at the University of');
    assert.deepEqual(
      candidateSpans(sentence!, 0).map((span) => span.text),
      ['University'],
    );
    for (const text of ['of', 'The Bank of', 'Subutai and', 'Manning -', '34 –']) readEverything('Who?', text);
  });

  it('a word the lemmatizer leaves without a lemma is its own lemma (a SQuAD sentence threw)', () => {
    const [sentence] = annotate('Apple hired Sir Jonathan Ive, as ordered by CEO Steve Jobs.');
    assert.equal(sentence!.tokens.find((token) => token.text === 'Ive')!.lemma, 'ive');
    assert.equal(sentence!.tokens.find((token) => token.text === 'ordered')!.lemma, 'order');
  });

  it('arbitrary Unicode, lone surrogates and control characters', { timeout: 120_000 }, () => {
    const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.string({ unit: anyCodeUnit, maxLength: 200 }),
      fc.string({ unit: 'grapheme', maxLength: 120 }),
    );
    fc.assert(
      fc.property(text, text, (question, passage) => {
        readEverything(question, passage);
      }),
      { numRuns: 3000, seed: 20261124 },
    );
  });

  it('the reader (encoder and head) answers arbitrary questions over arbitrary text without throwing', { timeout: 300_000 }, async () => {
    const config = loadConfig();
    const reader = await SpanReader.open({ modelsDir: modelsDir(), encoderDir: config.modelsDir, cacheBytes: 16 << 20 });
    try {
      const text = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 300 }),
        fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)), maxLength: 300 }),
        fc.lorem({ maxCount: 80 }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(fc.tuple(text, text), { minLength: 1, maxLength: 4 }), async (pairs) => {
          const spans = await reader.read(pairs.map(([question, passage]) => ({ question: analyseQuestion(question), text: passage })));
          assert.equal(spans.length, pairs.length);
          for (const span of spans) if (span) assert.ok(Number.isFinite(span.score) && span.probability >= 0 && span.probability <= 1);
          await reader.questionVectors(pairs.map(([question]) => analyseQuestion(question)));
        }),
        { numRuns: 200, seed: 20261124 },
      );
      // A passage longer than one encoder window is read in several.
      const long = Array.from({ length: 120 }, (_, i) => `Sentence number ${i} names Person${i} as the holder of office ${i}.`).join(' ');
      const [span] = await reader.read([{ question: analyseQuestion('Who holds office 97?'), text: long }]);
      assert.ok(span !== null);
    } finally {
      await reader.close();
    }
  });
});
