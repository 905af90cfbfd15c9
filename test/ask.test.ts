import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { exactMatch, f1Score, matchAccuracy } from '../src/bench/answerMetrics.js';
import { generateQuestions } from '../src/bench/questionGeneration.js';
import { AnsweringRepository } from '../src/graph/answeringRepository.js';
import { SnapshotRepository } from '../src/graph/snapshotRepository.js';
import { trainSoftmaxRegression } from '../src/learning/softmaxRegression.js';
import { AskService } from '../src/qa/askService.js';
import { CertaintyGate, GATE_CLASSES, GATE_FEATURES } from '../src/qa/certaintyGate.js';
import { GeneratorRegistry } from '../src/qa/generators/index.js';
import { expectedAnswerType } from '../src/qa/question.js';
import { SubjectIndex } from '../src/qa/subjects.js';
import { AnswerType } from '../src/text/annotation.js';
import { trainGate } from '../src/qa/training.js';
import { RetrievalMode } from '../src/qa/types.js';
import type { QaItem } from '../src/retrieval/evaluation.js';
import type { Runtime } from '../src/server/runtime.js';
import { execute, ingestDemo, openTestRuntime } from './support.js';

describe('answer metrics and question reading', () => {
  it('scores with SQuAD normalisation', () => {
    assert.equal(exactMatch('The Denver Broncos.', ['Denver Broncos']), 1);
    assert.equal(exactMatch('Broncos', ['Denver Broncos']), 0);
    assert.equal(f1Score('Broncos', ['Denver Broncos']), 2 / 3);
    assert.equal(matchAccuracy('they were the Denver Broncos', ['Denver Broncos']), 1);
    assert.equal(matchAccuracy('Denver', ['Denver Broncos']), 0);
  });

  it('reads the expected answer type from the wh-phrase', () => {
    assert.equal(expectedAnswerType('Who is the prime minister of France?'), AnswerType.NAME);
    assert.equal(expectedAnswerType('In what year did the war end?'), AnswerType.DATE);
    assert.equal(expectedAnswerType('How many people live there?'), AnswerType.NUMBER);
    assert.equal(expectedAnswerType('Where is the summit?'), AnswerType.PLACE);
    assert.equal(expectedAnswerType('What is the currency of France?'), AnswerType.THING);
  });

  it('links a question to the longest article titles it names', () => {
    const index = new SubjectIndex([
      { id: 'France', title: 'France' },
      { id: 'PMUK', title: 'Prime Minister of the United Kingdom' },
      { id: 'MU', title: 'Manchester United F.C.' },
    ]);
    assert.deepEqual(index.link('Who is the prime minister of the United Kingdom?').map((s) => s.articleId), ['PMUK']);
    assert.deepEqual(index.link('Who manages Manchester United these days?').map((s) => s.articleId), ['MU']);
    assert.deepEqual(index.link('Who is the prime minister of Spain?'), []);
  });

  it('trains a softmax regression that separates two classes, deterministically', () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ features: [i % 2 === 0 ? 1 + (i % 7) / 10 : -1 - (i % 5) / 10, (i % 3) / 3], label: i % 2 }));
    const first = trainSoftmaxRegression(rows, { classes: ['a', 'b'], features: ['x', 'noise'] });
    const second = trainSoftmaxRegression(rows, { classes: ['a', 'b'], features: ['x', 'noise'] });
    assert.deepEqual(first.model, second.model);
    assert.ok(first.loss < 0.1, `loss ${first.loss}`);
    assert.throws(() => trainSoftmaxRegression([{ features: [Number.NaN, 0], label: 0 }], { classes: ['a', 'b'], features: ['x', 'y'] }), /row 0/);
  });
});

describe('ask on the demo corpus', () => {
  let runtime: Runtime;
  before(async () => {
    runtime = await openTestRuntime();
    await ingestDemo(runtime);
    await runtime.services.retrieval.catchUp();
  });
  after(async () => {
    await runtime.close();
  });

  const ASK = `query($q: String!, $asOf: DateTime, $mode: RetrievalMode!, $k: Int, $conversation: [TurnInput!]) {
    ask(question: $q, asOf: $asOf, retrieval: $mode, k: $k, conversation: $conversation) {
      text adopted certainty { reliable misleading uncertain }
      decision { action timeSensitive cues changedSince { attribute value } }
      evidence { kind id text validFrom validTo round article { id } }
      rounds { round query omega hits { id } }
      timings { totalMs retrievalMs }
    } }`;

  it('answers "Who is the prime minister of France?" by date, with the evidence that says so', async () => {
    for (const [asOf, expected] of [
      ['2024-08-01', 'Gabriel Attal'],
      ['2024-10-01', 'Michel Barnier'],
    ] as const) {
      const { data, errors } = await execute(runtime, ASK, { q: 'Who is the prime minister of France?', asOf, mode: 'ADAPTIVE' });
      assert.equal(errors, undefined);
      assert.equal(data.ask.text, expected);
      assert.equal(data.ask.decision.action, 'RETRIEVE');
      assert.ok(data.ask.decision.changedSince.some((f: any) => f.attribute === 'Prime Minister'));
      assert.ok(data.ask.evidence[0].text.includes(expected));
      assert.equal(data.ask.evidence[0].article.id, 'France');
      assert.ok(data.ask.evidence.every((e: any) => e.validFrom <= `${asOf}T00:00:00.000Z` && (e.validTo === null || e.validTo > `${asOf}T00:00:00.000Z`)));
      assert.equal(data.ask.adopted, true);
      assert.ok(data.ask.certainty.reliable > 0.5);
    }
  });

  it('NEVER answers from the knowledge cutoff: what a stale generator says', async () => {
    const { data } = await execute(runtime, ASK, { q: 'Who is the prime minister of France?', asOf: '2024-10-01', mode: 'NEVER' });
    assert.equal(data.ask.text, 'Élisabeth Borne');
    assert.equal(data.ask.decision.action, 'NO_RETRIEVE');
    assert.deepEqual(data.ask.rounds, []);
    assert.equal(data.ask.certainty, null);
  });

  it('ADAPTIVE does not retrieve when nothing asked about changed since the cutoff', async () => {
    const { data } = await execute(runtime, ASK, { q: 'What is the elevation of Mount Everest?', asOf: '2025-01-01', mode: 'ADAPTIVE' });
    assert.equal(data.ask.decision.action, 'NO_RETRIEVE');
    assert.equal(data.ask.text, '8,848.86 m');
    assert.ok(data.ask.decision.cues.some((cue: string) => cue.includes('unchanged since')));
  });

  it('answers a follow-up with the earlier evidence (CONTINUE_WITH_EVIDENCE) or a summary query', async () => {
    const first = await execute(runtime, ASK, { q: 'Who is the prime minister of France?', asOf: '2024-10-01', mode: 'ADAPTIVE' });
    const turn = { question: 'Who is the prime minister of France?', answer: first.data.ask.text, evidenceIds: first.data.ask.evidence.map((e: any) => e.id) };
    const continued = await execute(runtime, ASK, { q: 'And before that?', asOf: '2024-10-01', mode: 'ADAPTIVE', conversation: [turn] });
    assert.equal(continued.errors, undefined);
    assert.equal(continued.data.ask.decision.action, 'CONTINUE_WITH_EVIDENCE');
    assert.equal(continued.data.ask.text, 'Gabriel Attal');
    const other = await execute(runtime, ASK, { q: 'And what is the capital of France?', asOf: '2024-10-01', mode: 'ADAPTIVE', conversation: [turn] });
    assert.equal(other.data.ask.text, 'Paris', 'a follow-up naming another attribute asks for that one');
    const summarised = await execute(runtime, ASK, { q: 'And before that?', asOf: '2024-10-01', mode: 'ADAPTIVE', conversation: [{ question: turn.question, answer: turn.answer }] });
    assert.equal(summarised.data.ask.decision.action, 'RETRIEVE');
    assert.match(summarised.data.ask.rounds[0].query, /France.*And before that\?/);
    assert.equal(summarised.data.ask.text, 'Gabriel Attal');
  });

  it('ALWAYS answers from the top passage; GATED from the most trusted document, without re-retrieval', async () => {
    const always = await execute(runtime, ASK, { q: 'Who is the prime minister of France?', asOf: '2024-10-01', mode: 'ALWAYS' });
    assert.equal(always.data.ask.evidence[0].kind, 'PASSAGE');
    assert.ok(always.data.ask.evidence.every((e: any) => e.kind === 'PASSAGE'), 'the RaLM baseline reads passages only');
    const gated = await execute(runtime, ASK, { q: 'Who is the head coach of Liverpool F.C.?', asOf: '2024-10-01', mode: 'GATED' });
    assert.equal(gated.data.ask.text, 'Arne Slot');
    assert.equal(gated.data.ask.rounds.length, 1);
  });

  it('RILM re-retrieves when the gate does not trust the answer: ω = λ·p(reliable), first-round passages excluded, the more reliable round wins', async () => {
    // A gate that trusts nothing: every answer goes to re-retrieval.
    const distrustful = CertaintyGate.fromModel({
      lambda: 2,
      classifier: { classes: [...GATE_CLASSES], features: [...GATE_FEATURES], layers: [{ weights: GATE_CLASSES.map(() => GATE_FEATURES.map(() => 0)), bias: [-3, 0, 1] }] },
    });
    const ask = new AskService({
      reads: runtime.services.reads,
      answering: new AnsweringRepository(runtime.services.db),
      snapshots: new SnapshotRepository(runtime.services.db),
      retrieval: runtime.services.retrieval,
      gate: distrustful,
    });
    const answer = await ask.ask({ question: 'Who is the prime minister of France?', asOf: new Date('2024-10-01'), retrieval: RetrievalMode.RILM, k: 3 });
    assert.equal(answer.adopted, false);
    assert.equal(answer.rounds.length, 2);
    const [first, second] = answer.rounds;
    const firstIds = new Set(first!.hits.map((hit) => hit.id));
    assert.ok(second!.hits.length > 0);
    assert.ok(second!.hits.every((hit) => !firstIds.has(hit.id)), 'round 2 excludes round 1');
    const p = Math.exp(-3) / (Math.exp(-3) + 1 + Math.exp(1));
    assert.ok(Math.abs(second!.omega - 2 * p) < 1e-4, `ω ${second!.omega}`);
    // Equal certainties everywhere: the first round's answer stands (round 2 must be strictly more reliable).
    assert.equal(answer.candidates[0]!.evidence.round, 1);
    const gated = await ask.ask({ question: 'Who is the prime minister of France?', asOf: new Date('2024-10-01'), retrieval: RetrievalMode.GATED });
    assert.equal(gated.rounds.length, 1);
  });

  it('batchAsk answers in input order, one search per asOf', async () => {
    const { data, errors } = await execute(
      runtime,
      `query($qs: [AskInput!]!) { batchAsk(questions: $qs) { text question asOf } }`,
      {
        qs: [
          { question: 'Who is the prime minister of France?', asOf: '2024-10-01' },
          { question: 'Who is the prime minister of France?', asOf: '2024-08-01', retrieval: 'RILM' },
          { question: 'Who is the head coach of Liverpool F.C.?', asOf: '2023-08-01', retrieval: 'GATED' },
        ],
      },
    );
    assert.equal(errors, undefined);
    assert.deepEqual(data.batchAsk.map((a: any) => a.text), ['Michel Barnier', 'Gabriel Attal', 'Jürgen Klopp']);
  });

  it('refuses bad input with BAD_USER_INPUT naming the argument', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ q: '   ' }, 'question', /must not be empty/],
      [{ q: 'x'.repeat(2001) }, 'question', /at most 2000/],
      [{ q: 'Who?', k: 0 }, 'k', /between 1 and 50/],
      [{ q: 'Who?', k: 51 }, 'k', /between 1 and 50/],
      [{ q: 'Who?', asOf: '2020-01-01' }, 'asOf', /before the first snapshot/],
      [{ q: 'Who?', conversation: Array.from({ length: 21 }, () => ({ question: 'Who?' })) }, 'conversation', /at most 20 turns/],
    ];
    for (const [variables, argument, message] of cases) {
      const { data, errors } = await execute(runtime, ASK, { mode: 'ADAPTIVE', ...variables });
      assert.equal(data, null);
      assert.equal(errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', JSON.stringify(variables).slice(0, 80));
      assert.equal(errors?.[0]?.extensions?.argument, argument);
      assert.match(errors![0]!.message, message);
    }
    const batch = await execute(runtime, `query { batchAsk(questions: [{question: "Who?"}, {question: "Who?", k: 99}]) { text } }`);
    assert.equal(batch.errors?.[0]?.extensions?.argument, 'questions[1].k');
    const unconfigured = await execute(runtime, `{ ask(question: "Who?", generator: "openai") { text } }`);
    assert.match(unconfigured.errors![0]!.message, /CHRONOQL_GENERATOR_BASE_URL/);
  });

  it('the openai generator speaks the chat-completions protocol and uses token logprobs', async () => {
    const requests: any[] = [];
    const server = createServer(async (request: IncomingMessage, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      requests.push({ url: request.url, auth: request.headers.authorization, body: JSON.parse(body) });
      const content = JSON.parse(body).messages[1].content.includes('Michel Barnier') ? 'Michel Barnier.' : 'I do not know';
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: { content: [{ token: 'x', logprob: -0.1 }, { token: 'y', logprob: -0.3 }] }, finish_reason: 'stop' }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const ask = new AskService({
        reads: runtime.services.reads,
        answering: new AnsweringRepository(runtime.services.db),
        snapshots: new SnapshotRepository(runtime.services.db),
        retrieval: runtime.services.retrieval,
        generators: new GeneratorRegistry({ CHRONOQL_GENERATOR_BASE_URL: `http://127.0.0.1:${port}`, CHRONOQL_GENERATOR_MODEL: 'test-model', CHRONOQL_GENERATOR_API_KEY: 'secret' }),
      });
      const answer = await ask.ask({ question: 'Who is the prime minister of France?', asOf: new Date('2024-10-01'), retrieval: RetrievalMode.GATED, generator: 'openai', k: 2 });
      assert.equal(answer.generator, 'openai');
      assert.equal(answer.text, 'Michel Barnier');
      assert.ok(Math.abs(answer.candidates[0]!.generatorConfidence - Math.exp(-0.2)) < 1e-9);
      assert.ok(requests.length >= 2, 'one request per document');
      assert.ok(requests.every((r) => r.url === '/v1/chat/completions' && r.auth === 'Bearer secret' && r.body.model === 'test-model' && r.body.logprobs === true));
      const never = await ask.ask({ question: 'Who is the prime minister of France?', asOf: new Date('2024-10-01'), retrieval: RetrievalMode.NEVER, generator: 'openai' });
      assert.equal(never.text, 'I do not know');
      assert.ok(!requests.at(-1).body.messages[1].content.includes('Document'), 'closed book sends no document');
    } finally {
      server.close();
    }
  });

  it('generates typed questions from the facts and trains the gate on them', async () => {
    const questions = await generateQuestions(new AnsweringRepository(runtime.services.db), await new SnapshotRepository(runtime.services.db).list());
    const france = questions.find((q) => q.factId === 'France#prime minister#2024-07-01');
    assert.equal(france?.question, 'Who is the prime minister of France?');
    assert.equal(france?.type, 'CHANGED');
    assert.deepEqual(france?.previousAnswers, ['Élisabeth Borne']);
    assert.ok(france!.evidence.length > 0);
    for (const type of ['NEW', 'CHANGED', 'UNCHANGED']) assert.ok(questions.some((q) => q.type === type), type);

    const items: QaItem[] = questions
      .filter((_, i) => i % 4 === 0)
      .map((q) => ({ question: q.question, answers: q.answers, previousAnswers: q.previousAnswers, type: q.type, asOf: new Date(q.asOf), context: q.context, documents: [] }));
    const report = await trainGate(runtime.services.answering, runtime.services.retrieval, items);
    const gate = CertaintyGate.fromModel(report.model);
    assert.ok(report.rows.reliable > 0 && report.rows.uncertain > 0);
    assert.ok([0, 0.5, 1, 2, 4, 8, 16, 32, 64].includes(gate.lambda));
    assert.ok(report.heldOutAccuracy > 0.5, `held-out accuracy ${report.heldOutAccuracy}`);
  });
});
