import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FactRecord } from '../../src/domain/model.js';
import { GATE_FEATURES, gateFeatures, type GateContext } from '../../src/qa/certaintyGate.js';
import { documentEvidence, factEvidence } from '../../src/qa/evidence.js';
import { analyseQuestion } from '../../src/qa/question.js';
import { EvidenceKind, type Evidence } from '../../src/qa/types.js';
import { recalibrateGate, type GateRow } from '../../eval/gateTraining.js';

const FROM = new Date('2024-07-01T00:00:00Z');
const fact = (subject: string, attribute: string, value: string): FactRecord => ({
  id: `${subject}/${attribute}`,
  subject,
  attribute,
  value,
  change: null,
  addedMembers: [],
  removedMembers: [],
  eventTimes: [],
  validFrom: FROM,
  validTo: null,
  recordedAt: FROM,
});

/** The two name features of one candidate: the question's names near the answer, and in the document's title. */
function nameFeatures(question: string, names: string[], evidence: Evidence, subjectWords: string[], asked: FactRecord | null = null): [number, number] {
  const context: GateContext = {
    question: analyseQuestion(question),
    names,
    evidence,
    answer: evidence.value ?? 'Jerome Powell',
    generatorConfidence: 1,
    readerScore: null,
    otherReaderScore: null,
    otherAnswers: [],
    factMatch: asked && {
      fact: asked,
      subject: { articleId: asked.subject, title: asked.subject, coverage: 1, words: subjectWords },
      similarity: 0.9,
      margin: 0.1,
      wordOverlap: 1,
      score: 1,
    },
    formerValues: [],
    subjectCoverage: 1,
    subjectWords,
    profile: undefined,
    asOf: FROM,
    timeSensitive: false,
    maxLexicalScore: 0,
  };
  const features = gateFeatures(context);
  return [features[GATE_FEATURES.indexOf('namesNearAnswer')]!, features[GATE_FEATURES.indexOf('namesInTitle')]!];
}

describe('the certainty gate’s name features', () => {
  it('count a name that links a fact’s article by another form, or its attribute by initials', () => {
    const chair = fact('Federal Reserve', 'Chair', 'Jerome Powell');
    assert.deepEqual(nameFeatures('Who chairs the Fed?', ['fed'], factEvidence(chair, 0), ['fed'], chair), [1, 1]);
    const vice = fact('President of Argentina', 'Vice President', 'Victoria Villarruel');
    assert.deepEqual(nameFeatures("Who is Argentina's VP?", ['argentina', 'vp'], factEvidence(vice, 0), ['argentina'], vice), [1, 1]);
  });

  it('count only names the text writes for a passage, and none that link another article', () => {
    const passage = documentEvidence({
      kind: EvidenceKind.PASSAGE,
      id: 'p1',
      articleId: 'Federal Reserve',
      text: 'Jerome Powell has been chair of the Board of Governors since February 2018.',
      validFrom: FROM,
      validTo: null,
    });
    assert.deepEqual(nameFeatures('Who chairs the Fed?', ['fed'], passage, ['fed']), [0, 0]);
    const chair = fact('Federal Reserve', 'Chair', 'Jerome Powell');
    assert.deepEqual(nameFeatures('Who chairs the Fed?', ['fed'], factEvidence(chair, 0), [], chair), [0, 0]);
  });

  it('recalibrate one kind of answer: the lowest p(reliable) from which 96 % of them are right, weights kept', async () => {
    // p(reliable) = e^x / (e^x + 2): one feature, three classes.
    const gate = {
      classifier: {
        type: 'linear' as const,
        classes: ['reliable', 'misleading', 'uncertain'],
        features: ['x'],
        layers: [{ weights: [[1], [0], [0]], bias: [0, 0, 0] }],
      },
      lambda: 2,
      adoptAt: { fact: 0.99, text: 0.9 },
    };
    const row = (question: string, x: number, right: boolean, isFact = true): GateRow => ({
      source: 'test',
      question,
      label: right ? 0 : 2,
      isFact,
      answer: 'a',
      features: [x],
    });
    // 100 fact questions: ten wrong ones at x = 0 to 2.7, 90 right ones at 2.0 to 10.9; beside them a text question and a weaker second candidate.
    const rows = Array.from({ length: 100 }, (_, i) => row(`q${i}`, i < 10 ? i * 0.3 : 1 + i / 10, i >= 10));
    rows.push(row('q50', 0.5, false), row('t', 20, false, false));
    const { model, report } = await recalibrateGate(gate, rows, { kind: 'fact', precision: 0.96 });
    const p = (x: number) => Math.exp(x) / (Math.exp(x) + 2);
    // From x = 2.0 on: 90 right of 93 (0.968); from the wrong one at 1.8 on, 90 of 94 (0.957).
    assert.ok(Math.abs(model.adoptAt.fact - p(2)) < 1e-5, `${model.adoptAt.fact}`);
    assert.equal(model.adoptAt.text, 0.9);
    assert.equal(model.classifier, gate.classifier);
    assert.deepEqual([report.before.questions, report.before.adopted, report.after.adopted, report.after.adoptedCorrect], [100, 57, 93, 90]);
    await assert.rejects(
      recalibrateGate(gate, rows.slice(1), { kind: 'fact', precision: 0.96 }),
      /at least 100 questions whose most trusted answer is a fact; the rows have 99/,
    );
  });
});
