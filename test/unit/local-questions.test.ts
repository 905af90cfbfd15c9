/**
 * The local question generator (GrowOVER-QA without a language model): the wh-forms and the
 * cloze fallback on hand-picked sentences, the CHANGED case with the answer the old version
 * gave, and, for random and real text, that it never throws, quotes every answer from its
 * evidence and never gives an answer away in its question.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { LocalQuestionGenerator, questionRevealsAnswer } from '../../src/benchmarks/localQuestions.js';
import type { DraftQuestion, GenerationInput } from '../../src/benchmarks/types.js';
import { readJsonLines } from '../../src/ingest/jsonLines.js';
import { splitSentences } from '../../src/ingest/sentenceSplitter.js';
import { projectRoot } from '../../src/platform/paths.js';

const generator = new LocalQuestionGenerator();
const draft = (title: string, ...texts: string[]): Promise<DraftQuestion[]> =>
  generator.questions({ title, sentences: texts.map((text) => ({ text })), type: 'NEW' });
const pairs = (drafts: readonly DraftQuestion[]): string[] => drafts.map((d) => `${d.question} => ${d.answers[0]}`);

/** What every draft must satisfy whatever the input: a verbatim answer from the sentence it cites, and a question that does not contain it. */
function assertValid(input: GenerationInput, drafts: readonly DraftQuestion[]): void {
  assert.ok(drafts.length <= 5);
  for (const d of drafts) {
    assert.equal(d.evidence.length, 1);
    const sentence = input.sentences[d.evidence[0]!];
    assert.ok(sentence, `evidence ${d.evidence[0]} is not an input sentence`);
    for (const answer of d.answers) {
      assert.ok(answer.trim() !== '' && sentence.text.includes(answer), `"${answer}" is not a span of "${sentence.text}"`);
      assert.ok(!questionRevealsAnswer(d.question, answer), `"${d.question}" gives away "${answer}"`);
    }
    for (const previous of d.previousAnswers) assert.ok(sentence.previousText?.includes(previous), `"${previous}" is not a span of the previous text`);
    assert.ok(['wh', 'cloze'].includes(d.form));
    if (d.form === 'cloze') assert.ok(d.question.includes('_____'));
    else assert.ok(d.question.endsWith('?'));
  }
}

describe('local question generator', () => {
  it('asks for a subject with Who and What, keeping the rest of the sentence', async () => {
    assert.deepEqual(pairs(await draft('Acme', 'John Smith founded the company.')), ['(Acme) Who founded the company? => John Smith']);
    assert.deepEqual(pairs(await draft('Oxygen', 'Azote later became nitrogen.')), ['(Oxygen) What later became nitrogen? => Azote']);
  });

  it('asks for a date with When or In what year, moving the auxiliary or adding do', async () => {
    assert.deepEqual(pairs(await draft('Acme', 'The company was founded in 1990.')), ['(Acme) In what year was the company founded? => 1990']);
    assert.deepEqual(pairs(await draft('Apollo 11', 'The astronauts returned safely on July 24.')), [
      '(Apollo 11) When did the astronauts return safely? => July 24',
    ]);
    assert.deepEqual(pairs(await draft('France', 'Michel Barnier has been prime minister since 5 September 2024.')), [
      '(France) Since when has Michel Barnier been prime minister? => 5 September 2024',
      '(France) Who has been prime minister since 5 September 2024? => Michel Barnier',
    ]);
  });

  it('turns an opening date into the wh-phrase and moves another opening phrase to the end', async () => {
    assert.deepEqual(pairs(await draft('John Smith', 'In 1990 Smith moved to Paris.')), [
      'In what year did Smith move to Paris? => 1990',
      'Who moved to Paris in 1990? => Smith',
      'Where did Smith move in 1990? => Paris',
    ]);
  });

  it('asks for a place with Where, a count with How many, an agent with By whom, a described name with Which', async () => {
    assert.deepEqual(pairs(await draft('Albert Einstein', 'He was born on 14 March 1879 in Ulm.')), [
      'When was Albert Einstein born in Ulm? => 14 March 1879',
      'Where was Albert Einstein born on 14 March 1879? => Ulm',
    ]);
    assert.deepEqual(pairs(await draft('Acme', 'The company has 3,000 employees.')), ['(Acme) How many employees does the company have? => 3,000']);
    assert.deepEqual(pairs(await draft('Hadrian', 'The wall was built by the Romans.')), ['(Hadrian) By whom was the wall built? => Romans']);
    assert.deepEqual(pairs(await draft('Romy Schneider', 'In 1958 she met the French actor Alain Delon.')), [
      'In what year did Romy Schneider meet the French actor Alain Delon? => 1958',
      'Which French actor did Romy Schneider meet in 1958? => Alain Delon',
    ]);
  });

  it('falls back to a cloze where no rewrite is safe, and names the article when the sentence does not', async () => {
    const drafts = await draft('Warsaw', 'The oldest park, which was designed by Enrico Marconi, is large.');
    assert.deepEqual(drafts, [
      {
        question: '(Warsaw) The oldest park, which was designed by _____, is large.',
        answers: ['Enrico Marconi'],
        previousAnswers: [],
        evidence: [0],
        form: 'cloze',
      },
    ]);
    // "It" opening the sentence is the article; "It is clear that" is not.
    assert.deepEqual(pairs(await draft('Warsaw', 'It is located in the heartland of the Masovian Plain.')), [
      'Warsaw is located in the heartland of the _____. => Masovian Plain',
    ]);
    assert.deepEqual(pairs(await draft('Warsaw', 'It is clear that Poland rebuilt the city.')), [
      '(Warsaw) It is clear that _____ rebuilt the city. => Poland',
    ]);
  });

  it('asks about the changed part of a CHANGED sentence and gives the answer its previous version gave', async () => {
    const input: GenerationInput = {
      title: 'France',
      type: 'CHANGED',
      sentences: [
        { text: 'Michel Barnier has been prime minister since September 2024.', previousText: 'Gabriel Attal has been prime minister since September 2024.' },
      ],
    };
    const drafts = await generator.questions(input);
    assert.deepEqual(drafts[0], {
      question: '(France) Who has been prime minister since September 2024?',
      answers: ['Michel Barnier'],
      previousAnswers: ['Gabriel Attal'],
      evidence: [0],
      form: 'wh',
    });
    assert.deepEqual(drafts[1]?.previousAnswers, []);
    assertValid(input, drafts);
    const year = await generator.questions({
      title: 'Acme',
      type: 'CHANGED',
      sentences: [{ text: 'The company was founded in 1992 by John Smith.', previousText: 'The company was founded in 1990 by John Smith.' }],
    });
    assert.deepEqual(pairs(year.slice(0, 1)), ['(Acme) In what year was the company founded by John Smith? => 1992']);
    assert.deepEqual(year[0]!.previousAnswers, ['1990']);
  });

  it('falls back to any answer, with no previous answer, when the change holds none', async () => {
    const drafts = await generator.questions({
      title: 'Acme',
      type: 'CHANGED',
      sentences: [{ text: 'The company was founded in 1990, reportedly.', previousText: 'The company was founded in 1990.' }],
    });
    assert.deepEqual(pairs(drafts), ['(Acme) In what year was the company founded? => 1990']);
    assert.deepEqual(drafts[0]!.previousAnswers, []);
  });

  it('never asks a question that contains its answer', async () => {
    // The title names the answer: it is not prefixed, and the subject question about it stays.
    assert.deepEqual(pairs(await draft('Denver Broncos', 'Denver Broncos won the game in 2016.')), [
      'In what year did Denver Broncos win the game? => 2016',
      'Who won the game in 2016? => Denver Broncos',
    ]);
    // With "He" read as the title "John Smith", any question about "Smith" names it.
    assert.deepEqual(pairs(await draft('John Smith', 'He worked with Smith in 1990.')), ['In what year did John Smith work with Smith? => 1990']);
    assert.equal(questionRevealsAnswer('When was the 2016 game played?', '2016'), true);
    assert.equal(questionRevealsAnswer('Who founded Smith Company?', 'John Smith'), true);
    assert.equal(questionRevealsAnswer('Who founded the company?', 'John Smith'), false);
  });

  it('gives the same drafts for the same input', async () => {
    const input: GenerationInput = {
      title: 'Super Bowl 50',
      type: 'NEW',
      sentences: [
        { text: "The game was played on February 7, 2016, at Levi's Stadium in Santa Clara, California." },
        { text: 'Denver defeated Carolina 24–10.' },
      ],
    };
    const first = await generator.questions(input);
    assert.ok(first.length > 0);
    assert.deepEqual(await generator.questions(structuredClone(input)), first);
    assertValid(input, first);
  });

  it('gives [] or valid drafts for empty, odd and huge input', async () => {
    const odd = [
      '',
      '   ',
      '?!.,;',
      '🙂🙂 🎉',
      '\ud800 lone \udfff surrogates in 1990',
      'Smith '.repeat(2000),
      `${'The company grew in 1990 and '.repeat(400)}stopped.`,
      '\u0000\u0007 control 1990',
    ];
    for (const text of odd) {
      for (const type of ['NEW', 'CHANGED'] as const) {
        const input: GenerationInput = { title: text, type, sentences: [{ text, previousText: type === 'CHANGED' ? `${text} 1991` : null }] };
        assertValid(input, await generator.questions(input));
      }
    }
    assert.deepEqual(await generator.questions({ title: 'Empty', type: 'NEW', sentences: [] }), []);
  });

  describe('on random and real text', () => {
    let realSentences: string[] = [];
    before(async () => {
      const { parsed } = await readJsonLines(join(projectRoot(), 'data', 'squad', 'squad-dev-subset.jsonl.gz'));
      const paragraphs = [...new Set(parsed.map(({ value }) => (value as { context: Array<{ text: string }> }).context[0]!.text))].slice(0, 40);
      realSentences = paragraphs.flatMap((paragraph) => splitSentences(paragraph).map((sentence) => sentence.text));
    });

    it('never throws, quotes its answers and keeps them out of its questions', { timeout: 300_000 }, async () => {
      const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
      const real = fc.integer({ min: 0, max: realSentences.length - 1 }).map((i) => realSentences[i]!);
      // A real sentence cut anywhere, or with a random insertion: what an edit between two snapshots looks like.
      const edited = fc
        .tuple(real, fc.nat(), fc.string({ maxLength: 12 }))
        .map(([text, at, insert]) => text.slice(0, at % (text.length + 1)) + insert + text.slice(at % (text.length + 1)));
      const text = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.string({ unit: anyCodeUnit, maxLength: 200 }),
        fc.lorem({ maxCount: 30 }),
        real,
        edited,
      );
      const sentence = fc.record({ text, previousText: fc.option(fc.oneof(text, real), { nil: null }) });
      const input = fc.record({
        title: fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('Warsaw', 'Super Bowl 50', 'Oxygen')),
        sentences: fc.array(sentence, { maxLength: 4 }),
        type: fc.constantFrom('NEW', 'CHANGED', 'UNCHANGED') as fc.Arbitrary<GenerationInput['type']>,
      });
      await fc.assert(
        fc.asyncProperty(input, async (generated) => {
          assertValid(generated, await generator.questions(generated));
        }),
        { numRuns: 1000, seed: 20261124 },
      );
    });
  });
});
