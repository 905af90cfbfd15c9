/**
 * No text makes the annotation, question reading and reader code throw: real paragraphs cut at
 * every token (a retrieved sentence often ends mid-phrase, "She studied at the University of"),
 * and arbitrary Unicode, lone surrogates and control characters included. Snapshot input of any
 * bytes and any Unicode is refused where it must be, and said where.
 */
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readEverything } from '../support/textFuzz.js';
import fc from 'fast-check';
import { modelsDir } from '../../src/platform/paths.js';
import { analyseQuestion } from '../../src/qa/question.js';
import { SpanReader } from '../../src/qa/reader/spanReader.js';
import { annotate, candidateSpans } from '../../src/text/annotation.js';
import { loadConfig } from '../../src/app/config.js';
import { attributeKey } from '../../src/ingest/factDiff.js';
import { MAX_ATTRIBUTE_BYTES, MAX_ID_BYTES } from '../../src/ingest/inputLimits.js';
import { readJsonLines } from '../../src/ingest/jsonLines.js';
import { checkArticle } from '../../src/ingest/snapshotReader.js';

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

  it(
    'snapshot lines of any bytes: each line that is not UTF-8 is reported once, where its bad bytes start; the others decode as UTF-8',
    { timeout: 120_000 },
    async () => {
      const directory = await mkdtemp(join(tmpdir(), 'chronoql-fuzz-'));
      const file = join(directory, 'any.jsonl');
      const text = fc.string({ unit: 'grapheme', maxLength: 30 }).map((id) => Buffer.from(JSON.stringify({ id, text: 'x' })));
      const bytes = fc.uint8Array({ maxLength: 40 }).map((array) => Buffer.from(array.filter((byte) => byte !== 0x0a)));
      try {
        await fc.assert(
          fc.asyncProperty(fc.array(fc.oneof(text, bytes), { maxLength: 8 }), async (lines) => {
            await writeFile(file, Buffer.concat(lines.flatMap((line) => [line, Buffer.from('\n')])));
            const { parsed, problems } = await readJsonLines(file);
            assert.equal(new Set(problems.map((problem) => problem.line)).size, problems.length, 'one problem a line');
            const notUtf8 = problems.filter((problem) => problem.message.startsWith('invalid UTF-8'));
            assert.deepEqual(
              notUtf8.map((problem) => problem.line),
              lines.flatMap((line, i) => (isUtf8(line) ? [] : [i + 1])),
            );
            for (const { line, message } of notUtf8) {
              const start = Number(/\(byte (\d+) of the line/.exec(message)![1]) - 1;
              assert.ok(isUtf8(lines[line - 1]!.subarray(0, start)) && !isUtf8(lines[line - 1]!.subarray(start)), message);
            }
            for (const { line, value } of parsed) assert.deepEqual(value, JSON.parse(lines[line - 1]!.toString('utf8')));
          }),
          { numRuns: 300, seed: 20261124 },
        );
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    },
  );

  it('ids and attribute names of any Unicode: accepted only well-formed, visible and within their size as indexed', { timeout: 120_000 }, () => {
    const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
    const name = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 30 }),
      fc.string({ unit: anyCodeUnit, maxLength: 30 }),
      fc.string({ unit: 'grapheme', maxLength: 20 }),
      fc.constantFrom('\u{1D160}'.repeat(512), '\u023A'.repeat(1024), 'France\u200B', 'x'.repeat(3000)),
    );
    fc.assert(
      fc.property(name, name, (id, attribute) => {
        const checked = checkArticle({ id, text: 'Text.', infobox: { [attribute]: 'value' } });
        if (Array.isArray(checked)) {
          assert.ok(
            checked.every((problem) => problem.length < 500),
            `a problem quotes its input cut short: ${checked.join('; ').slice(0, 300)}`,
          );
          return;
        }
        for (const accepted of [checked.id, ...Object.keys(checked.infobox)]) assert.doesNotMatch(accepted, /[\p{Cc}\p{Cf}\p{Cs}]/u);
        assert.ok(Buffer.byteLength(checked.id) <= MAX_ID_BYTES);
        for (const accepted of Object.keys(checked.infobox)) assert.ok(Buffer.byteLength(attributeKey(accepted)) <= MAX_ATTRIBUTE_BYTES);
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
