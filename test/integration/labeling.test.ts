import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Runtime } from '../../src/app/runtime.js';
import { execute, ingestDemo, openTestRuntime } from '../support/runtime.js';

describe('labels in the graph', () => {
  let runtime: Runtime;
  before(async () => {
    runtime = await openTestRuntime();
  });
  after(async () => {
    await runtime.close();
  });

  it('re-ingesting the demo corpus gives the same labels twice, and the change feed and history use them', async () => {
    const labels = async (): Promise<string> => {
      const events = await runtime.services.reads.changesBetween(0, null, {}, 10_000);
      const sentences = await runtime.services.reads.sentencesByIds(
        events.flatMap((e) => [e.sentenceId, e.previousSentenceId].filter((id): id is string => id !== null)),
      );
      return JSON.stringify(
        events.map((e) => [e.kind, e.articleId, sentences.get(e.sentenceId ?? '')?.text ?? null, sentences.get(e.previousSentenceId ?? '')?.text ?? null]),
      );
    };
    await ingestDemo(runtime);
    const first = await labels();
    await ingestDemo(runtime);
    assert.equal(await labels(), first);
    const { data } = await execute(runtime, `{ factHistory(subject: "Tour de France", attribute: "Champion") { value change } }`);
    assert.deepEqual(data.factHistory.map((f: any) => [f.value, f.change]).slice(-2), [
      ['Tadej Pogacar', 'UPDATED'],
      ['Tadej Pogačar', 'REFINED'],
    ]);
  });
});
