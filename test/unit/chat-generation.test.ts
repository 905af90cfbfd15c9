/**
 * The chat-model generators of the living benchmark against a local server that speaks the
 * chat-completions protocol: what the prompt carries, which replies are kept and which dropped.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ChatDialogueGenerator, ChatQuestionGenerator, dialoguesFromReply, questionsFromReply, replyJson } from '../../src/benchmarks/chatGeneration.js';
import type { GenerationInput } from '../../src/benchmarks/types.js';
import { ChatRequestError } from '../../src/platform/openaiChat.js';
import { startChatServer, type ChatServer, type ChatServerReply } from '../support/chatServer.js';

const FRANCE: GenerationInput = {
  title: 'France',
  type: 'NEW',
  sentences: [
    { text: 'France is a country in Western Europe.' },
    { text: 'Its capital is Paris.' },
    { text: 'Michel Barnier became prime minister in September 2024.' },
  ],
};

const FRANCE_CHANGED: GenerationInput = {
  title: 'France',
  type: 'CHANGED',
  sentences: [{ text: 'The prime minister is Michel Barnier.', previousText: 'The prime minister is Gabriel Attal.' }],
};

const turn = (evidence: unknown) => ({ user: 'Tell me about France.', expert: 'It is a country in Western Europe.', evidence });

describe('chat generators (GrowOVER-QA, GrowOVER-DIALOGUE)', () => {
  let server: ChatServer;
  let nextReply: ChatServerReply = { content: '' };
  const config = () => ({ baseUrl: server.baseUrl, model: 'qg-model', apiKey: 'secret' });

  before(async () => {
    server = await startChatServer(() => nextReply);
  });
  after(async () => {
    await server.close();
  });

  it('asks with the model and the numbered sentences, and keeps a good question with its evidence span', async () => {
    nextReply = { content: JSON.stringify({ questions: [{ question: 'What is the capital of France?', answer: 'paris', evidence: [2] }] }) };
    const drafts = await new ChatQuestionGenerator(config()).questions(FRANCE);
    assert.deepEqual(drafts, [{ question: 'What is the capital of France?', answers: ['Paris'], previousAnswers: [], evidence: [1], form: 'chat' }]);
    const request = server.requests.at(-1)!;
    assert.equal(request.url, '/v1/chat/completions');
    assert.equal(request.authorization, 'Bearer secret');
    assert.equal(request.body.model, 'qg-model');
    const prompt = request.body.messages.map((message: { content: string }) => message.content).join('\n');
    assert.match(prompt, /\[1\] France is a country in Western Europe\.\n\[2\] Its capital is Paris\.\n\[3\] Michel Barnier/);
    assert.match(prompt, /Title: France/);
    assert.match(prompt, /JSON/);
    assert.doesNotMatch(prompt, /previous/i, 'a NEW input asks for no previous answer');
  });

  it('reads JSON inside a ```json fence with prose around it', async () => {
    nextReply = {
      content:
        'Sure! Here is one:\n```json\n{"questions": [{"question": "Who became prime minister of France in September 2024?", "answer": "Michel Barnier", "evidence": ["3"]}]}\n```\nHope that helps {really}.',
    };
    const drafts = await new ChatQuestionGenerator(config()).questions(FRANCE);
    assert.deepEqual(
      drafts.map((draft) => [draft.answers, draft.evidence]),
      [[['Michel Barnier'], [2]]],
    );
    assert.deepEqual(replyJson('The answer is {"question": "Q?", "answer": "a } b", "evidence": 1} as asked.'), {
      question: 'Q?',
      answer: 'a } b',
      evidence: 1,
    });
    assert.equal(replyJson('no JSON here {at all'), undefined);
    assert.deepEqual(replyJson('Sentence [2] says it: [{"question": "Q?"}]'), [{ question: 'Q?' }], 'a sentence number in prose is not the reply');
  });

  it('drops questions whose answer is not in the cited evidence, is in the question, or cites a sentence that does not exist', async () => {
    nextReply = {
      content: JSON.stringify([
        { question: 'What is the capital of France?', answer: 'Lyon', evidence: [2] },
        { question: 'What is the capital of France?', answer: 'Paris', evidence: [1] },
        { question: 'Is Paris the capital of France?', answer: 'Paris', evidence: [2] },
        { question: 'What is the capital of France?', answer: 'Paris', evidence: [4] },
        { question: 'What is the capital of France?', answer: 'Paris', evidence: [0] },
        { question: 'What is the capital of France?', answer: 'Paris', evidence: [] },
        { question: '', answer: 'Paris', evidence: [2] },
        { question: 'Which continent is France in?', answer: 'Western Europe', evidence: 1 },
      ]),
    };
    const drafts = await new ChatQuestionGenerator(config()).questions(FRANCE);
    assert.deepEqual(
      drafts.map((draft) => draft.question),
      ['Which continent is France in?'],
    );
  });

  it('returns nothing for a reply that is not JSON, and never throws on it', async () => {
    for (const content of ['I cannot help with that.', '{"questions": "none"}', '[1, 2, 3]', 'null']) {
      nextReply = { content };
      assert.deepEqual(await new ChatQuestionGenerator(config()).questions(FRANCE), []);
    }
  });

  it('no reply text, however odd, makes the reply readers throw', () => {
    const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
    const answerish = fc.record({
      question: fc.string({ unit: anyCodeUnit }),
      answer: fc.string({ unit: anyCodeUnit }),
      previous_answer: fc.string(),
      evidence: fc.jsonValue(),
    });
    const reply = fc.oneof(
      fc.string({ unit: anyCodeUnit, maxLength: 300 }),
      fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
      fc.array(answerish, { maxLength: 4 }).map((questions) => `Here: ${JSON.stringify({ questions })} ok`),
    );
    fc.assert(
      fc.property(reply, (content) => {
        for (const input of [FRANCE, FRANCE_CHANGED]) {
          questionsFromReply(content, input);
          dialoguesFromReply(content, input);
        }
      }),
      { numRuns: 2000, seed: 20240611 },
    );
  });

  it('asks a CHANGED input for the previous answer and keeps it only when the old text gave it', async () => {
    nextReply = {
      content: JSON.stringify({
        questions: [
          { question: 'Who is the prime minister of France?', answer: 'Michel Barnier', previous_answer: 'Gabriel Attal', evidence: [1] },
          { question: 'Who is the prime minister of France?', answer: 'Michel Barnier', previous_answer: 'Édouard Philippe', evidence: [1] },
          { question: 'Who is the prime minister of France?', answer: 'Michel Barnier', evidence: [1] },
        ],
      }),
    };
    const drafts = await new ChatQuestionGenerator(config()).questions(FRANCE_CHANGED);
    assert.deepEqual(
      drafts.map((draft) => draft.previousAnswers),
      [['Gabriel Attal']],
    );
    const prompt = server.requests.at(-1)!.body.messages[1].content as string;
    assert.match(prompt, /\[1\] The prime minister is Michel Barnier\.\n\s+\(previous version: The prime minister is Gabriel Attal\.\)/);
    assert.match(prompt, /previous_answer/);
  });

  it('keeps a dialogue of 3 turns resting on existing sentences and drops one of 2 turns or with a bad turn', async () => {
    nextReply = {
      content: JSON.stringify({
        dialogues: [
          { turns: [turn(1), turn('2'), turn([3])] },
          { turns: [turn(1), turn(2)] },
          { turns: [turn(1), turn(2), turn(3), turn(1), turn(2)] },
          { turns: [turn(1), turn(2), turn(4)] },
          { turns: [turn(1), turn(2), { ...turn(3), expert: ' ' }] },
        ],
      }),
    };
    const dialogues = await new ChatDialogueGenerator(config()).dialogues(FRANCE);
    assert.deepEqual(dialogues, [{ turns: [turn(0), turn(1), turn(2)] }]);
    const prompt = server.requests.at(-1)!.body.messages[1].content as string;
    assert.match(prompt, /\[2\] Its capital is Paris\./);
    assert.equal(server.requests.at(-1)!.body.model, 'qg-model');
  });

  it('reads a dialogue given as a bare list of four turns', async () => {
    nextReply = { content: '```\n' + JSON.stringify([turn(1), turn(2), turn(3), turn(2)]) + '\n```' };
    const dialogues = await new ChatDialogueGenerator(config()).dialogues(FRANCE);
    assert.deepEqual(
      dialogues.map((dialogue) => dialogue.turns.map((t) => t.evidence)),
      [[0, 1, 2, 1]],
    );
  });

  it('an HTTP 500 gives an error that names the endpoint', async () => {
    nextReply = { status: 500, text: 'model overloaded' };
    const expected = (error: unknown): boolean =>
      error instanceof ChatRequestError &&
      error.message.includes(`${server.baseUrl}/v1/chat/completions`) &&
      error.message.includes('500') &&
      error.message.includes('model overloaded');
    await assert.rejects(new ChatQuestionGenerator(config()).questions(FRANCE), expected);
    await assert.rejects(new ChatDialogueGenerator(config()).dialogues(FRANCE), expected);
  });
});
