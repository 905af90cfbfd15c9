import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Runtime } from '../../src/app/runtime.js';
import { exportLines, importItems } from '../../src/benchmarks/benchmarkFiles.js';
import { startChatServer, type ChatServer, type ChatServerRequest } from '../support/chatServer.js';
import { article, day, execute, openTestRuntime, resetKnowledge } from '../support/runtime.js';

// Paragraphs of 3–4 sentences and 300–600 characters: GrowOVER's candidates in an article's first snapshot.
const LOUVRE_1 =
  "The Louvre is the world's most visited art museum and a historic landmark on the Right Bank of the Seine in Paris, and it opened to the public in 1793. It was first built as a fortress for King Philip II in 1190. The museum shows about 35,000 works of art in eight curatorial departments. Its glass pyramid, designed by the Chinese-American architect I. M. Pei, was completed in 1989.";
const LOUVRE_2 = LOUVRE_1.replace('1190', '1202').replace('35,000', '38,000');
const TOWER =
  'The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, named after the engineer whose company built it. It was designed by the engineer Gustave Eiffel for the World Fair of 1889. The tower is 330 metres tall and was the tallest structure in the world until 1930. About six million people visit it every year, which makes it one of the most visited monuments.';
/** The same sentences, each now its own paragraph: every sentence but the first is relocated, unchanged. */
const TOWER_SPLIT = TOWER.replace(/\. (?=[A-Z])/g, '.\n\n');

const count = (rows: Array<{ type: string }>, type: string): number => rows.filter((row) => row.type === type).length;

describe('the living benchmark kept with every snapshot', () => {
  let runtime: Runtime;
  before(async () => {
    runtime = await openTestRuntime({ env: { CHRONOQL_BENCHMARK: 'local' } });
  });
  after(async () => {
    await runtime.close();
  });
  beforeEach(async () => {
    await resetKnowledge(runtime);
  });

  it('drafts items at the first snapshot, keeps them UNCHANGED, carries moved evidence over, retires changed evidence and drafts CHANGED items', async () => {
    await runtime.services.ingest.ingest([article('Louvre', LOUVRE_1, { Opened: '1793' }), article('Eiffel Tower', TOWER)], {
      takenAt: day('2024-01-01'),
      source: 'test',
    });
    const first = await exportLines(runtime.services.benchmarkItems, { asOf: day('2024-01-01'), kinds: null, types: null });
    assert.ok(
      first.some((item) => item.kind === 'TEXT_QA' && item.context[0] === 'Louvre'),
      'a question from the Louvre paragraph',
    );
    assert.ok(
      first.some((item) => item.kind === 'TEXT_QA' && item.context[0] === 'Eiffel Tower'),
      'a question from the tower paragraph',
    );
    assert.ok(
      first.some((item) => item.kind === 'FACT_QA' && item.answers[0] === '1793'),
      'a question from the infobox fact',
    );
    assert.equal(count(first, 'NEW'), first.length, 'everything is NEW at the first snapshot');
    for (const item of first.filter((line) => line.kind === 'TEXT_QA')) {
      assert.ok(!item.question.toLowerCase().includes(item.answers[0]!.toLowerCase()), `the answer is not in the question: ${item.question}`);
      assert.ok(item.evidence.join(' ').toLowerCase().includes(item.answers[0]!.toLowerCase()), `the evidence holds the answer: ${item.question}`);
    }

    await runtime.services.ingest.ingest([article('Louvre', LOUVRE_2, { Opened: '1793' }), article('Eiffel Tower', TOWER_SPLIT)], {
      takenAt: day('2025-01-01'),
      source: 'test',
    });
    const second = await exportLines(runtime.services.benchmarkItems, { asOf: day('2025-01-01'), kinds: null, types: null });
    const byId = new Map(second.map((item) => [item.id, item]));
    for (const item of first) {
      const later = byId.get(item.id);
      const changedEvidence = item.evidence.some((text) => /1190|35,000/.test(text));
      if (changedEvidence) {
        assert.equal(later, undefined, `an item resting on a changed sentence is retired: ${item.question}`);
      } else {
        assert.ok(later, `an item on unchanged or moved evidence stays: ${item.question}`);
        assert.equal(later.type, 'UNCHANGED');
        assert.deepEqual(later.evidence, item.evidence, 'a moved sentence is remapped to its new version with the same text');
      }
    }
    const changed = second.filter((item) => item.type === 'CHANGED');
    assert.ok(changed.length > 0, 'the changed sentences gave CHANGED items');
    for (const item of changed) assert.ok(/1202|38,000/.test(item.evidence.join(' ')), `a CHANGED item rests on a changed sentence: ${item.question}`);
    assert.ok(
      changed.some((item) => item.previousAnswers.length > 0),
      'a CHANGED item remembers the answer before the change',
    );

    // The benchmark as of the first snapshot is unchanged by what came later.
    assert.deepEqual(
      (await exportLines(runtime.services.benchmarkItems, { asOf: day('2024-06-01'), kinds: null, types: null })).map((item) => [
        item.id,
        item.type,
        item.evidence,
      ]),
      first.map((item) => [item.id, item.type, item.evidence]),
    );
    // The carried-over items kept their history: two versions, the first closed at the second snapshot.
    const { data } = await execute(
      runtime,
      `{ benchmarkStats { snapshotId kind type count } b: benchmark(asOf: "2025-01-01T00:00:00Z", types: [CHANGED], first: 2) { totalCount edges { node { itemId type previousAnswers evidence { text } } } pageInfo { hasNextPage endCursor } } }`,
    );
    assert.equal(data.b.totalCount, changed.length);
    assert.equal(data.b.edges[0].node.type, 'CHANGED');
    const stats = data.benchmarkStats as Array<{ snapshotId: string; kind: string; type: string; count: number }>;
    assert.equal(
      stats.filter((row) => row.snapshotId === '2024-01-01').reduce((sum, row) => sum + row.count, 0),
      first.length,
    );
    assert.equal(
      stats.filter((row) => row.snapshotId === '2025-01-01').reduce((sum, row) => sum + row.count, 0),
      second.length,
    );

    // Paging walks every item once, in order, with the same total on every page, the last one included.
    const walked: string[] = [];
    for (let after: string | null = null; ;) {
      const page: { data: any } = await execute(
        runtime,
        'query ($after: String) { benchmark(asOf: "2025-01-01T00:00:00Z", first: 3, after: $after) { totalCount edges { node { itemId } } pageInfo { hasNextPage endCursor } } }',
        { after },
      );
      assert.equal(page.data.benchmark.totalCount, second.length);
      walked.push(...page.data.benchmark.edges.map((edge: { node: { itemId: string } }) => edge.node.itemId));
      if (!page.data.benchmark.pageInfo.hasNextPage) break;
      after = page.data.benchmark.pageInfo.endCursor;
    }
    assert.deepEqual(
      walked,
      second.map((item) => item.id),
    );

    // Maintenance is idempotent: running it again, for either snapshot, writes nothing.
    const versions = async (): Promise<number> => (await runtime.services.db.run<{ n: number }>('MATCH (v:BenchmarkItem) RETURN count(v) AS n'))[0]!.n;
    const stored = await versions();
    assert.deepEqual(await runtime.benchmark!.catchUp(), []);
    await runtime.benchmark!.maintain({ id: '2024-01-01', takenAt: day('2024-01-01') });
    await runtime.benchmark!.maintain({ id: '2025-01-01', takenAt: day('2025-01-01') });
    assert.equal(await versions(), stored);
    assert.deepEqual(await exportLines(runtime.services.benchmarkItems, { asOf: day('2025-01-01'), kinds: null, types: null }), second);
  });

  it('imports public sets in each shape with their contexts, once', async () => {
    const squad = JSON.stringify({
      version: '1.1',
      data: [
        {
          title: 'Paris',
          paragraphs: [
            {
              context: 'Paris is the capital of France.',
              qas: [{ id: 'q1', question: 'What is the capital of France?', answers: [{ text: 'Paris', answer_start: 0 }] }],
            },
          ],
        },
      ],
    });
    const retrievalQa = JSON.stringify({
      question_id: 'realtimeqa_20231013_1',
      question: 'Who won?',
      ground_truth: ['Someone'],
      context: [{ title: 'News', text: 'Someone won.' }],
      data_source: 'realtimeqa',
    });
    const dynaQuest = JSON.stringify({
      question: 'Who is the prime minister of France?',
      answer: 'Michel Barnier',
      answer_old: 'Gabriel Attal',
      paragraphs: [{ title: 'France', text: 'Michel Barnier is prime minister.' }],
    });
    const db = runtime.services.db;
    assert.deepEqual(await importItems(db, squad, 'squad', 'squad-sample', day('2024-01-01')), { items: 1, written: 1 });
    assert.deepEqual(await importItems(db, retrievalQa, 'retrievalqa', 'rqa', day('2024-01-01')), { items: 1, written: 1 });
    assert.deepEqual(await importItems(db, dynaQuest, 'dynaquest', 'dq', day('2024-01-01')), { items: 1, written: 1 });
    assert.deepEqual(await importItems(db, squad, 'squad', 'squad-sample', day('2024-01-01')), { items: 1, written: 0 }, 'importing again writes nothing');
    const items = await exportLines(runtime.services.benchmarkItems, { asOf: day('2024-02-01'), kinds: ['IMPORTED'], types: null });
    assert.deepEqual(
      items.map((item) => [item.id, item.answers, item.context]),
      [
        ['dq:' + items[0]!.id.slice(3), ['Michel Barnier'], [{ title: 'France', text: 'Michel Barnier is prime minister.' }]],
        ['rqa:realtimeqa_20231013_1', ['Someone'], [{ title: 'News', text: 'Someone won.' }]],
        ['squad-sample:q1', ['Paris'], [{ title: 'Paris', text: 'Paris is the capital of France.' }]],
      ],
    );
    assert.deepEqual(items[0]!.previousAnswers, ['Gabriel Attal']);
  });
});

/**
 * A chat model that drafts from the numbered sentences it is shown, and fails when told to. With
 * a decoy, its first question is one its evidence does not answer (the reader finds a year, not "art").
 */
function draftingModel(
  failOn: (request: ChatServerRequest, index: number) => boolean,
  decoy: () => boolean,
): (request: ChatServerRequest) => { content: string } | { status: number; text: string } {
  let index = 0;
  return (request) => {
    if (failOn(request, index++)) return { status: 500, text: 'model overloaded' };
    const prompt = String(request.body.messages.at(-1).content);
    const sentences = [...prompt.matchAll(/^\[(\d+)\] (.*)$/gm)].map((match) => match[2]!);
    if (/conversation/.test(prompt)) {
      const turns = sentences.slice(0, 3).map((text, i) => ({ user: i === 0 ? 'Tell me about the Louvre.' : 'What else?', expert: text, evidence: i + 1 }));
      return { content: JSON.stringify({ dialogues: [{ turns }] }) };
    }
    const previous = [...prompt.matchAll(/\(previous version: (.*)\)/g)].map((match) => match[1]!);
    const at = sentences.findIndex((text) => /\b\d{4}\b/.test(text));
    if (at < 0) return { content: '{"questions": []}' };
    const year = /\b\d{4}\b/.exec(sentences[at]!)![0];
    const question = `In which year: ${sentences[at]!.replace(year, 'what year').replace(/\.$/, '')}?`;
    const previousYear = previous[0]?.match(/\b\d{4}\b/g)?.find((value) => value !== year);
    const good = { question, answer: year, evidence: [at + 1], ...(previousYear ? { previous_answer: previousYear } : {}) };
    const unanswered = { question: 'In which year did the museum open to the public?', answer: 'art', evidence: [1] };
    return { content: JSON.stringify({ questions: decoy() && /\bart\b/.test(sentences[0]!) ? [unanswered, good] : [good] }) };
  };
}

describe('dialogues and a maintenance cut short, with an OpenAI-compatible generator', () => {
  let model: ChatServer;
  let failing = false;
  let decoy = false;
  let runtime: Runtime;
  before(async () => {
    model = await startChatServer(
      draftingModel(
        () => failing,
        () => decoy,
      ),
    );
    runtime = await openTestRuntime({ env: { CHRONOQL_BENCHMARK: 'openai', CHRONOQL_GENERATOR_BASE_URL: model.baseUrl, CHRONOQL_GENERATOR_MODEL: 'drafter' } });
  });
  after(async () => {
    await runtime.close();
    await model.close();
  });
  beforeEach(async () => {
    await resetKnowledge(runtime);
    failing = false;
    decoy = false;
  });

  it('keeps a drafted question only when the reader answers it from its own evidence', async () => {
    decoy = true;
    await runtime.services.ingest.ingest([article('Louvre', LOUVRE_1)], { takenAt: day('2024-01-01'), source: 'test' });
    const asked = model.requests.filter((request) => /quiz/.test(String(request.body.messages[0].content))).length;
    assert.equal(asked, 1, 'one paragraph, one request');
    const items = await exportLines(runtime.services.benchmarkItems, { asOf: day('2024-01-01'), kinds: ['TEXT_QA'], types: null });
    assert.deepEqual(
      items.map((item) => item.answers),
      [['1793']],
      'the unanswered draft was dropped, the next one kept',
    );
  });

  it('keeps a dialogue whose turn lost its evidence, leaving out only that turn', async () => {
    await runtime.services.ingest.ingest([article('Louvre', LOUVRE_1)], { takenAt: day('2024-01-01'), source: 'test' });
    const turns = (asOf: string) => exportLines(runtime.services.benchmarkItems, { asOf: day(asOf), kinds: ['DIALOGUE_TURN'], types: null });
    const before = await turns('2024-01-01');
    assert.deepEqual(
      before.map((turn) => turn.turn),
      [0, 1, 2],
    );
    assert.equal(new Set(before.map((turn) => turn.dialogueId)).size, 1);
    assert.ok(
      model.requests.some((request) => /drafter/.test(request.body.model)),
      'the generator endpoint was asked',
    );

    await runtime.services.ingest.ingest([article('Louvre', LOUVRE_2)], { takenAt: day('2025-01-01'), source: 'test' });
    const later = await turns('2025-01-01');
    // Turns 1 and 2 rested on the fortress (1190 → 1202) and collection (35,000 → 38,000) sentences: out of the
    // evaluation; turn 0 stays in its dialogue, typed UNCHANGED.
    assert.deepEqual(
      later.map((turn) => [turn.dialogueId, turn.turn, turn.type]),
      [[before[0]!.dialogueId, 0, 'UNCHANGED']],
    );
    const changed = await exportLines(runtime.services.benchmarkItems, { asOf: day('2025-01-01'), kinds: ['TEXT_QA'], types: ['CHANGED'] });
    assert.deepEqual(
      changed.map((item) => [item.answers, item.previousAnswers]),
      [[['1202'], ['1190']]],
    );
  });

  it('finishes a maintenance that failed half-way when run again, writing nothing twice', async () => {
    await runtime.services.ingest.ingest([article('Louvre', LOUVRE_1), article('Eiffel Tower', TOWER)], { takenAt: day('2024-01-01'), source: 'test' });
    const first = await exportLines(runtime.services.benchmarkItems, { asOf: day('2024-01-01'), kinds: null, types: null });
    const onChanged = first.filter((item) => item.evidence.some((text) => /1190|35,000/.test(text)));
    assert.ok(onChanged.length > 0, 'some items rest on the sentences the next snapshot changes');

    // The model fails while the second snapshot is maintained: the retirements are written, the drafting is not.
    failing = true;
    await runtime.services.ingest.ingest([article('Louvre', LOUVRE_2), article('Eiffel Tower', TOWER)], { takenAt: day('2025-01-01'), source: 'test' });
    const cut = await exportLines(runtime.services.benchmarkItems, { asOf: day('2025-01-01'), kinds: null, types: null });
    assert.deepEqual(
      cut.map((item) => item.id).sort(),
      first
        .filter((item) => !onChanged.includes(item))
        .map((item) => item.id)
        .sort(),
      'retired at once',
    );
    assert.equal(cut.filter((item) => item.type === 'CHANGED' && item.kind !== 'FACT_QA').length, 0, 'nothing drafted yet');
    const maintained = async (): Promise<boolean> =>
      (
        await runtime.services.db.run<{ maintained: boolean }>(`MATCH (s:Snapshot {id: '2025-01-01'}) RETURN s.benchmarkMaintainedAt IS NOT NULL AS maintained`)
      )[0]!.maintained;
    assert.equal(await maintained(), false, 'the snapshot is left to maintain');

    failing = false;
    const [report] = await runtime.benchmark!.catchUp();
    assert.equal(report?.snapshotId, '2025-01-01');
    assert.equal(report.retired, 0, 'what was retired is not retired again');
    assert.ok(report.kept > 0);
    assert.equal(await maintained(), true);
    const items = await exportLines(runtime.services.benchmarkItems, { asOf: day('2025-01-01'), kinds: null, types: null });
    assert.ok(
      items.some((item) => item.type === 'CHANGED' && item.kind === 'TEXT_QA'),
      'the changed sentence now has its item',
    );
    assert.equal(new Set(items.map((item) => item.id)).size, items.length, 'no item twice');
    const retiredTwice = await runtime.services.db.run<{ n: number }>(
      `MATCH (v:BenchmarkItem)-[:REVISED_AS]->(:BenchmarkItem)-[:REVISED_AS]->(:BenchmarkItem) RETURN count(v) AS n`,
    );
    assert.equal(retiredTwice[0]!.n, 0);
  });
});
