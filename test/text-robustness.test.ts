/**
 * No text makes the annotation, question reading and reader code throw: real paragraphs cut at
 * every token (a retrieved sentence often ends mid-phrase, "She studied at the University of"),
 * and arbitrary Unicode, lone surrogates and control characters included.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { seededRandom } from '../src/learning/random.js';
import { modelsDir, projectRoot } from '../src/platform/paths.js';
import { analyseQuestion, questionNames } from '../src/qa/question.js';
import { bestSpan, MAX_PASSAGE_WORDS, SpanReader } from '../src/qa/reader/spanReader.js';
import { questionFeatures, readerPassage, WORD_FEATURES, wordFeatures } from '../src/qa/reader/wordFeatures.js';
import { SubjectIndex } from '../src/qa/subjects.js';
import { readTimeScope } from '../src/qa/timeScope.js';
import { readQaFile } from '../eval/qaFile.js';
import { annotate, candidateSpans } from '../src/text/annotation.js';
import { loadConfig } from '../src/app/config.js';

const random = seededRandom(7);
const SUBJECTS = new SubjectIndex(['France', 'Manchester United F.C.', 'Speaker of the United States House of Representatives', 'World Health Organization', '2030 Winter Olympics', 'Ω ß İ'].map((title) => ({ id: title, title })));

/** Everything the answerers derive from a text with the question's help (the reader's scores drawn at random). */
function readEverything(question: string, text: string): void {
  annotate(text).forEach((sentence, s) => {
    for (const span of candidateSpans(sentence, s)) assert.ok(span.start < span.end && span.end <= sentence.tokens.length, `span ${span.start}..${span.end} outside "${sentence.text}"`);
  });
  const asked = analyseQuestion(question);
  questionNames(asked);
  readTimeScope(question, new Date('2025-01-15T00:00:00Z'));
  for (const subject of SUBJECTS.link(question)) assert.ok(subject.coverage >= 0.5 && subject.coverage <= 1);
  assert.ok(questionFeatures(asked).every(Number.isFinite));
  const passage = readerPassage(text, MAX_PASSAGE_WORDS);
  const features = wordFeatures(asked, passage);
  assert.equal(features.length, passage.words.length * WORD_FEATURES.length);
  assert.ok(features.every(Number.isFinite), `non-finite word feature in "${text}"`);
  const scores = (): Float32Array => Float32Array.from(passage.words, () => random() * 20 - 10);
  const span = bestSpan(passage, scores(), scores());
  if (span) assert.ok(span.text !== '' && span.probability >= 0 && span.probability <= 1, `span "${span.text}" of "${text}"`);
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

  it('the reader (encoder and head) answers arbitrary questions over arbitrary text without throwing', { timeout: 300_000 }, async () => {
    const config = loadConfig();
    const reader = await SpanReader.open({ modelsDir: modelsDir(), encoderDir: config.modelsDir, cacheBytes: 16 << 20 });
    try {
      const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)), maxLength: 300 }), fc.lorem({ maxCount: 80 }));
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

