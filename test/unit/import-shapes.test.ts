/**
 * Public QA sets read in their published shapes (SQuAD nested and flat, RetrievalQA, DynaQuest):
 * small samples written here in each shape, the problems each bad record is reported with, and
 * random text, which never throws anything but InvalidImportError.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { InvalidImportError, parseImportedItems, type ImportShape } from '../../src/benchmarks/importShapes.js';

const jsonLines = (...records: unknown[]): string => records.map((record) => JSON.stringify(record)).join('\n') + '\n';

/** The `source:where: message` lines of the error the text is rejected with. */
function problemsOf(text: string, shape: ImportShape, source = 'set.jsonl'): string[] {
  try {
    parseImportedItems(text, shape, source);
  } catch (error) {
    assert.ok(error instanceof InvalidImportError, String(error));
    return error.problems.map((problem) => `${problem.source}:${problem.where}: ${problem.message}`);
  }
  assert.fail('expected the import to be rejected');
}

const NESTED_SQUAD = {
  version: '1.1',
  data: [
    {
      title: 'Super_Bowl_50',
      paragraphs: [
        {
          context: 'Super Bowl 50 was won by the Denver Broncos, who beat the Carolina Panthers.',
          qas: [
            {
              id: 'q1',
              question: 'Which team won Super Bowl 50?',
              answers: [
                { text: 'Denver Broncos', answer_start: 29 },
                { text: 'the Denver Broncos', answer_start: 25 },
                { text: 'Denver Broncos', answer_start: 29 },
              ],
            },
            { id: 'q2', question: 'Who lost Super Bowl 50?', answers: [{ text: 'Carolina Panthers', answer_start: 58 }] },
          ],
        },
      ],
    },
  ],
};

describe('importing public QA sets', () => {
  it('reads official nested SQuAD JSON, one item per question with its paragraph', () => {
    const { items } = parseImportedItems(JSON.stringify(NESTED_SQUAD, null, 2), 'squad', 'dev-v1.1.json');
    assert.deepEqual(items[0], {
      id: 'q1',
      question: 'Which team won Super Bowl 50?',
      answers: ['Denver Broncos', 'the Denver Broncos'],
      contexts: [{ title: 'Super_Bowl_50', text: NESTED_SQUAD.data[0]!.paragraphs[0]!.context }],
      asOf: null,
      type: null,
      previousAnswers: [],
    });
    assert.deepEqual(
      items.map((item) => item.id),
      ['q1', 'q2'],
    );
  });

  it('reads flat SQuAD JSON Lines (data/squad) and the Hugging Face flat form', () => {
    const text = jsonLines(
      {
        id: '56be4db0acb8001400a502ec',
        question: 'Which NFL team represented the AFC at Super Bowl 50?',
        answers: ['Denver Broncos'],
        context: [{ title: 'Super Bowl 50', text: 'The AFC champion Denver Broncos ...' }],
      },
      {
        id: 'hf1',
        title: 'Super_Bowl_50',
        context: 'The NFC champion Carolina Panthers ...',
        question: 'Who represented the NFC?',
        answers: { text: ['Carolina Panthers'], answer_start: [17] },
      },
      {
        id: 'chronoql1',
        question: 'Who is the prime minister of France?',
        answers: ['Michel Barnier'],
        previousAnswers: ['Gabriel Attal'],
        asOf: '2024-10-01',
        type: 'CHANGED',
      },
    );
    const { items } = parseImportedItems(text, 'squad', 'squad-dev-subset.jsonl');
    assert.deepEqual(items[0]!.contexts, [{ title: 'Super Bowl 50', text: 'The AFC champion Denver Broncos ...' }]);
    assert.deepEqual(items[1]!.contexts, [{ title: 'Super_Bowl_50', text: 'The NFC champion Carolina Panthers ...' }]);
    assert.deepEqual(items[1]!.answers, ['Carolina Panthers']);
    assert.deepEqual([items[2]!.asOf, items[2]!.type, items[2]!.previousAnswers], ['2024-10-01', 'CHANGED', ['Gabriel Attal']]);
  });

  it('reads RetrievalQA records, dating RealTimeQA questions by their quiz day', () => {
    const text = jsonLines(
      {
        data_source: 'realtimeqa',
        question_id: 'realtimeqa_20231013_2',
        question: 'A new study names which country as the worst in the developed world for housing?',
        ground_truth: ['England'],
        context: [{ title: '', text: 'England worst place in developed world to find housing, says report.' }],
        param_knowledge_answerable: 0,
        prompt_token_num: 16,
      },
      {
        data_source: 'popqa',
        question_id: 'popqa_7',
        question: "What is Edward Corser's occupation?",
        ground_truth: ['politician', 'political leader'],
        context: ['{"title": "Edward Corser", "text": "Edward Corser was an Australian politician."}'],
      },
    );
    const { items } = parseImportedItems(text, 'retrievalqa', 'retrievalqa.jsonl');
    assert.equal(items[0]!.id, 'realtimeqa_20231013_2');
    assert.equal(items[0]!.asOf, '2023-10-13');
    assert.deepEqual(items[0]!.contexts, [{ title: '', text: 'England worst place in developed world to find housing, says report.' }]);
    assert.deepEqual([items[1]!.asOf, items[1]!.answers, items[1]!.contexts[0]!.title], [null, ['politician', 'political leader'], 'Edward Corser']);
  });

  it('reads DynaQuest records: CARL sample lines, and dated, typed lists with bare context texts', () => {
    const sample = jsonLines(
      {
        question: 'Which title was conferred to Nihal Sarin in 2018?',
        answer: 'Grand Master',
        answer_old: 'Grand Master',
        paragraphs: [{ title: 'Nihal Sarin', text: 'He became a grandmaster in 2018.' }],
        ans_in_context: true,
      },
      { question: 'Who coaches Club X?', answer: 'Ana Silva', answer_old: 'Bo Berg', paragraphs: [{ title: 'Club X', text: 'Ana Silva coaches Club X.' }] },
    );
    const carl = parseImportedItems(sample, 'dynaquest', 'sample.jsonl').items;
    assert.deepEqual(
      carl.map((item) => [item.previousAnswers, item.type]),
      [
        [[], null],
        [['Bo Berg'], null],
      ],
    );
    // Records without an id are named by their question and answers, not by their line.
    const reordered = parseImportedItems(sample.split('\n').reverse().join('\n'), 'dynaquest', 'sample.jsonl').items;
    assert.deepEqual(
      reordered.map((item) => item.id).reverse(),
      carl.map((item) => item.id),
    );
    assert.match(carl[0]!.id, /^[0-9a-f]{16}$/);
    const combined = JSON.stringify([
      {
        id: 7,
        page: 'Club X',
        question: 'Who is the head coach of Club X?',
        answer: 'Ana Silva',
        previous_answer: 'Bo Berg',
        type: 'Updated',
        date: '2024-09-16',
        context: ['Ana Silva was appointed head coach in September 2024.'],
      },
      { id: 8, page: 'Club X', question: 'Who is the chairman of Club X?', answer: 'Unknown', type: 'new', context: [] },
      { id: 9, page: 'Club X', question: 'Where does Club X play?', answers: ['Arena Y'], type: 'UNCHANGED', timestamp: '2024-09-16T12:00:00Z' },
    ]);
    const { items } = parseImportedItems(combined, 'dynaquest', 'combined_data.json');
    assert.deepEqual(items[0], {
      id: '7',
      question: 'Who is the head coach of Club X?',
      answers: ['Ana Silva'],
      contexts: [{ title: 'Club X', text: 'Ana Silva was appointed head coach in September 2024.' }],
      asOf: '2024-09-16',
      type: 'CHANGED',
      previousAnswers: ['Bo Berg'],
    });
    assert.deepEqual(
      items.map((item) => item.id),
      ['7', '9'],
      'an "Unknown" answer is left out, as DynaQuest scores it',
    );
    assert.deepEqual([items[1]!.type, items[1]!.asOf], ['UNCHANGED', '2024-09-16T12:00:00.000Z']);
  });

  it('reports every bad record with its line, and returns nothing', () => {
    const text = [
      JSON.stringify({ question_id: 'ok', question: 'Who?', ground_truth: ['Ann'] }),
      JSON.stringify({ question_id: 'a', ground_truth: ['Ann'] }),
      '',
      JSON.stringify({ question_id: 'b', question: 'Who?', ground_truth: [] }),
      JSON.stringify({ question_id: 'c', question: 'Who?', ground_truth: 'Ann', context: 'a text' }),
      JSON.stringify({ question_id: 'd', question: 'Who?', ground_truth: [3] }),
      JSON.stringify({ question_id: false, question: 'Who?', ground_truth: ['Ann'], context: [{ title: 1, text: 'x' }] }),
      '{"question_id": "e", ',
      JSON.stringify(['not', 'a', 'record']),
      JSON.stringify({ question_id: 'ok', question: 'Who else?', ground_truth: ['Bo'] }),
    ].join('\n');
    assert.deepEqual(
      problemsOf(text, 'retrievalqa', 'rqa.jsonl').map((line) => line.replace(/invalid JSON: .*/, 'invalid JSON')),
      [
        'rqa.jsonl:2: "question" must be a non-empty string',
        'rqa.jsonl:4: "ground_truth" is empty: an item needs at least one answer',
        'rqa.jsonl:5: "ground_truth" must be a list of non-empty strings',
        'rqa.jsonl:5: "context" must be a list of {title, text} objects or of texts',
        'rqa.jsonl:6: "ground_truth" must be a list of non-empty strings',
        'rqa.jsonl:7: "question_id" must be a non-empty string or a number when given',
        'rqa.jsonl:7: "context"[0] must be a {title, text} object or a text',
        'rqa.jsonl:8: invalid JSON',
        'rqa.jsonl:9: expected a JSON object',
        'rqa.jsonl:10: id "ok" appears twice (first at 1)',
      ],
    );
  });

  it('reports bad dates and types, and nested SQuAD problems by record path', () => {
    const dynaquest = jsonLines(
      { question: 'Q1?', answer: 'A', date: '2024-02-30' },
      { question: 'Q2?', answer: 'A', timestamp: 1726444800 },
      { question: 'Q3?', answer: 'A', type: 'deleted' },
      { question: 'Q4?', answer: 'A', answer_old: 7 },
    );
    const problems = problemsOf(dynaquest, 'dynaquest', 'dq.jsonl');
    assert.equal(problems.length, 4);
    assert.match(problems[0]!, /^dq\.jsonl:1: "date": "2024-02-30" is not a date/);
    assert.match(problems[1]!, /^dq\.jsonl:2: "timestamp" must be a date string/);
    assert.match(problems[2]!, /^dq\.jsonl:3: "type" must be one of new, updated \(or changed\), unchanged; got "deleted"/);
    assert.match(problems[3]!, /^dq\.jsonl:4: "answer_old" must be a list of non-empty strings/);

    const broken = structuredClone(NESTED_SQUAD) as any;
    broken.data[0].paragraphs[0].qas[1].answers = [];
    broken.data[0].paragraphs[0].qas.push({ id: 'q3', answers: [{ text: '' }] });
    broken.data.push({ title: 'No paragraphs' });
    assert.deepEqual(problemsOf(JSON.stringify(broken), 'squad', 'dev.json'), [
      'dev.json:data[1]: an article must be an object with a string "title" and a list "paragraphs"',
      'dev.json:data[0].paragraphs[0].qas[1]: "answers" is empty: an item needs at least one answer',
      'dev.json:data[0].paragraphs[0].qas[2]: "question" must be a non-empty string',
      'dev.json:data[0].paragraphs[0].qas[2]: every answer must have a non-empty string "text"',
    ]);
    const impossible = structuredClone(NESTED_SQUAD) as any;
    impossible.data[0].paragraphs[0].qas[1] = { id: 'q2', question: 'Who lost Super Bowl 51?', answers: [], is_impossible: true };
    assert.deepEqual(
      parseImportedItems(JSON.stringify(impossible), 'squad', 'dev-v2.0.json').items.map((item) => item.id),
      ['q1'],
      'SQuAD 2.0 unanswerable questions are left out',
    );
  });

  it('reports a broken JSON document once, at the line where it breaks, and an empty text as no questions', () => {
    const pretty = JSON.stringify(NESTED_SQUAD, null, 2).split('\n');
    pretty.splice(5, 0, '        "oops": 1 2,');
    const [problem, ...others] = problemsOf(pretty.join('\n'), 'squad', 'dev.json');
    assert.deepEqual(others, []);
    assert.match(problem!, /^dev\.json:6: invalid JSON/);
    assert.deepEqual(problemsOf(' \n\n', 'dynaquest', 'empty.jsonl'), ['empty.jsonl:1: no answerable questions']);
    assert.deepEqual(problemsOf('\uFEFF' + jsonLines({ question: 'Q?', answer: 'Unknown' }), 'dynaquest', 'unknown.jsonl'), [
      'unknown.jsonl:1: no answerable questions',
    ]);
  });

  it('random text and random JSON never throw anything but InvalidImportError', { timeout: 120_000 }, () => {
    const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
    const field = fc.constantFrom(
      'id',
      'question',
      'answers',
      'answer',
      'ground_truth',
      'question_id',
      'context',
      'paragraphs',
      'data',
      'qas',
      'title',
      'text',
      'type',
      'date',
      'asOf',
      'answer_old',
      'is_impossible',
      '__proto__',
    );
    const nearRecord = fc.dictionary(field, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 });
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.string({ unit: anyCodeUnit, maxLength: 300 }),
      fc.jsonValue({ maxDepth: 5 }).map((value) => JSON.stringify(value)),
      fc.array(nearRecord, { maxLength: 5 }).map((records) => records.map((record) => JSON.stringify(record)).join('\n')),
      fc.array(nearRecord, { maxLength: 5 }).map((records) => JSON.stringify({ data: [{ title: 'T', paragraphs: [{ context: 'C', qas: records }] }] })),
    );
    fc.assert(
      fc.property(text, fc.constantFrom<ImportShape>('squad', 'retrievalqa', 'dynaquest'), (input, shape) => {
        try {
          const { items } = parseImportedItems(input, shape, 'fuzz');
          assert.ok(items.length > 0 && items.every((item) => item.question !== '' && item.answers.length > 0));
        } catch (error) {
          if (!(error instanceof InvalidImportError)) throw error;
        }
      }),
      { numRuns: 3000, seed: 20250611 },
    );
  });
});
