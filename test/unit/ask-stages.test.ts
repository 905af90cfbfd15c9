// Each stage of `ask`, and `ask` as a whole, on in-memory fakes of its ports
// (test/support/answeringFakes.ts): no Neo4j, no models.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FactChangeKind } from '../../src/domain/model.js';
import { AskService } from '../../src/qa/askService.js';
import { QuestionPlanner } from '../../src/qa/planning.js';
import { DecisionAction, RetrievalMode, type AskRequest } from '../../src/qa/types.js';
import { inRequestScope, RequestTimeoutError } from '../../src/platform/requestScope.js';
import { READING_GATE_FEATURES } from '../../src/qa/readingGate.js';
import { fakeGate, fakePorts, onePageWorld, type FakeWorld } from '../support/answeringFakes.js';

/** France's prime ministers as a store of four snapshots would hold them. */
const FRANCE: FakeWorld = {
  snapshots: ['2023-07-01', '2024-07-01', '2024-10-01', '2025-01-15'],
  articles: [
    {
      id: 'France',
      facts: [
        { attribute: 'Prime Minister', value: 'Élisabeth Borne', from: '2023-07-01', to: '2024-07-01' },
        { attribute: 'Prime Minister', value: 'Gabriel Attal', from: '2024-07-01', to: '2024-10-01' },
        { attribute: 'Prime Minister', value: 'Michel Barnier', from: '2024-10-01', to: '2025-01-15' },
        { attribute: 'Prime Minister', value: 'François Bayrou', from: '2025-01-15' },
        { attribute: 'Capital', value: 'Paris', from: '2023-07-01' },
      ],
      passages: [
        { text: 'The prime minister of France is Élisabeth Borne.', from: '2023-07-01', to: '2024-07-01' },
        { text: 'The prime minister of France is Gabriel Attal.', from: '2024-07-01', to: '2024-10-01' },
        { text: 'The prime minister of France is Michel Barnier.', from: '2024-10-01', to: '2025-01-15' },
        { text: 'The capital of France is Paris.', from: '2023-07-01' },
        { text: 'France has a long coastline on the Atlantic.', from: '2023-07-01' },
      ],
    },
  ],
};

const ask = (request: AskRequest, ports = fakePorts(FRANCE)) => new AskService(ports).ask(request, new Date('2025-03-01T00:00:00Z'));

describe('ask, stage by stage, on fakes', () => {
  it('plans a question: the time it names becomes the instants to answer at, with the fact it asks for at each', async () => {
    const planner = new QuestionPlanner(fakePorts(FRANCE));
    const [asked] = await planner.plan([{ question: 'Who was the prime minister of France in August 2024?', asOf: new Date('2025-03-01') }], new Date(), 'ask');
    assert.equal(asked!.scope?.kind, 'DURING');
    assert.deepEqual(
      asked!.plans.map((plan) => [plan.asOf.toISOString().slice(0, 10), plan.factMatch?.fact.value]),
      [['2024-08-01', 'Gabriel Attal']],
    );
    assert.match(asked!.plans[0]!.decision.cues[0]!, /time expression "in August 2024"/);
  });

  it('answers from the graph’s fact as of the asked date and adopts what the gate trusts', async () => {
    const before = await ask({ question: 'Who is the prime minister of France?', asOf: new Date('2024-08-01') });
    const after = await ask({ question: 'Who is the prime minister of France?', asOf: new Date('2024-10-01') });
    assert.deepEqual([before.text, after.text], ['Gabriel Attal', 'Michel Barnier']);
    assert.equal(after.candidates[0]!.evidence.kind, 'FACT');
    assert.equal(after.decision.action, DecisionAction.RETRIEVE);
  });

  it('leaves the fact out of the RaLM baseline (ALWAYS answers from the top passage)', async () => {
    const always = await ask({ question: 'Who is the prime minister of France?', asOf: new Date('2024-10-01'), retrieval: RetrievalMode.ALWAYS });
    assert.equal(always.guess, 'Michel Barnier');
    assert.ok(always.candidates.every((candidate) => candidate.evidence.kind !== 'FACT'));
  });

  it('re-retrieves when no answer is trusted: ω = λ·p(reliable), first-round passages left out, the first round kept when not beaten', async () => {
    const ports = fakePorts(
      FRANCE,
      fakeGate(() => 0.2),
    );
    const answer = await ask({ question: 'Who is the prime minister of France?', asOf: new Date('2024-10-01'), retrieval: RetrievalMode.RILM, k: 1 }, ports);
    assert.equal(ports.calls.reRetrievals, 1);
    assert.equal(answer.rounds.length, 2);
    const [first, second] = answer.rounds;
    assert.ok(Math.abs(second!.omega - 0.4) < 1e-9, `ω ${second!.omega}`);
    assert.ok(second!.hits.every((hit) => !first!.hits.some((seen) => seen.id === hit.id)));
    assert.equal(answer.candidates[0]!.evidence.round, 1, 'equal certainty: the first round stands');
    const gated = fakePorts(
      FRANCE,
      fakeGate(() => 0.2),
    );
    await ask({ question: 'Who is the prime minister of France?', asOf: new Date('2024-10-01'), retrieval: RetrievalMode.GATED }, gated);
    assert.equal(gated.calls.reRetrievals, 0, 'GATED never re-retrieves');
  });

  it('abstains below the adoption threshold, with its guess and why', async () => {
    const answer = await ask(
      { question: 'Who is the prime minister of France?', asOf: new Date('2024-10-01'), retrieval: RetrievalMode.GATED },
      fakePorts(
        FRANCE,
        fakeGate(() => 0.3),
      ),
    );
    assert.equal(answer.text, null);
    assert.equal(answer.adopted, false);
    assert.ok(answer.guess);
    assert.match(answer.decision.cues[0]!, /^not adopted: p\(reliable\) 0\.30 is below 0\.50/);
    const noGate = await ask({ question: 'Who is the prime minister of France?', asOf: new Date('2024-10-01') }, fakePorts(FRANCE, null));
    assert.match(noGate.decision.cues[0]!, /no certainty gate is trained/);
  });

  it("adopts no quiz option, and no passage's news for a week no text speaks of", async () => {
    const QUIZ = onePageWorld(
      'Weekly quiz',
      [
        'Which planet is known as the Red Planet? Venus, Mars, Jupiter or Saturn?',
        'The first debate was held on 23 August 2023. Eight candidates took part in the debate.',
      ],
      '2023-09-01',
    );
    const gatedAt = (question: string) =>
      ask(
        { question, asOf: new Date('2023-12-08'), retrieval: RetrievalMode.GATED },
        fakePorts(
          QUIZ,
          fakeGate(() => 0.99),
        ),
      );
    const quiz = await gatedAt('Which planet is known as the Red Planet?');
    assert.equal(quiz.adopted, false, `adopted ${quiz.guess}`);
    assert.match(quiz.decision.cues[0]!, /list options, as a quiz does|reads as a list of options/);
    const thisWeek = await gatedAt('How many candidates took part in the debate this week?');
    assert.equal(thisWeek.adopted, false, `adopted ${thisWeek.guess}`);
    assert.match(thisWeek.decision.cues[0]!, /no text the store knew as of 2023-12-08 states a time in "this week"/);
    const undated = await gatedAt('How many candidates took part in the first debate?');
    assert.equal(undated.adopted, true, `${undated.guess}: ${undated.decision.cues[0]}`);
    // An instant asks what held then, which a passage valid then says.
    const instant = await gatedAt('How many candidates took part in the first debate as of October 2023?');
    assert.equal(instant.timeScope?.kind, 'AT');
    assert.equal(instant.adopted, true, `${instant.guess}: ${instant.decision.cues[0]}`);
  });

  it("cuts a span naming the asked fact's value and more to the value, not a longer name", async () => {
    const recordWorld = (passage: string): FakeWorld => ({
      snapshots: ['2025-01-15'],
      articles: [
        {
          id: 'Marathon world record',
          facts: [{ attribute: 'Record holder', value: 'Ruth Chepngetich', from: '2025-01-15' }],
          passages: [{ text: passage, from: '2025-01-15' }],
        },
      ],
    });
    const textTrusted = fakeGate((f) => (f.isFact ? 0.7 : 0.95));
    const holder = (passage: string) =>
      ask(
        { question: 'Who is the marathon world record holder?', asOf: new Date('2025-02-01'), retrieval: RetrievalMode.GATED },
        fakePorts(recordWorld(passage), textTrusted),
      );
    const cut = await holder('The record is held by World Champion Ruth Chepngetich, who ran 2:09:56 in Chicago.');
    assert.equal(cut.candidates[0]!.evidence.kind, 'PASSAGE');
    assert.equal(cut.guess, 'Ruth Chepngetich');
    assert.deepEqual(
      cut.candidates.map((candidate) => candidate.answer),
      ['Ruth Chepngetich', 'Ruth Chepngetich'],
      'the cut span replaces the read one: the passage, then the fact',
    );
    const longer = await holder('The record is held by World Champion Ruth Chepngetich Junior, who ran 2:09:56 in Chicago.');
    assert.equal(longer.guess, 'World Champion Ruth Chepngetich Junior', 'a capitalised word after the value continues the name');
  });

  it('does not adopt an answer about a name the store has never heard of', async () => {
    const answer = await ask({ question: 'Who is the prime minister of Atlantis?', asOf: new Date('2024-10-01') });
    assert.equal(answer.adopted, false);
    assert.match(answer.decision.cues.join(' '), /knows nothing about "atlantis"/i);
  });

  it('does not adopt another subject\'s fact for a name no article is about, which the question asks something of ("Trump\'s")', async () => {
    const argentina: FakeWorld = {
      snapshots: ['2024-07-01'],
      articles: [
        {
          id: 'President of Argentina',
          facts: [{ attribute: 'Vice President', value: 'Victoria Villarruel', from: '2024-07-01' }],
          passages: [{ text: 'Vice President Victoria Villarruel took office in 2023.', from: '2024-07-01' }],
        },
        { id: 'United States', passages: [{ text: 'Donald Trump won the 2024 election. Brazil voted in 2022.', from: '2024-07-01' }] },
      ],
    };
    const owned = await ask({ question: "Who will be Trump's vice president?", asOf: new Date('2025-01-16') }, fakePorts(argentina));
    assert.equal(owned.adopted, false);
    assert.match(owned.decision.cues.join(' '), /asks something of "trump", which no article is about/);
    const ofBrazil = await ask({ question: 'Who is the vice president of Brazil?', asOf: new Date('2025-01-16') }, fakePorts(argentina));
    assert.equal(ofBrazil.adopted, false, `got ${ofBrazil.guess}`);
    assert.match(ofBrazil.decision.cues.join(' '), /asks something of "brazil"/, 'a name after "of" is asked something of too');
    const linked = await ask({ question: "Who is Argentina's vice president?", asOf: new Date('2025-01-16') }, fakePorts(argentina));
    assert.deepEqual([linked.guess, linked.adopted], ['Victoria Villarruel', true], 'an owner an article is about is no stranger');
    const club: FakeWorld = {
      snapshots: ['2024-07-01'],
      articles: [
        {
          id: 'Manchester United',
          facts: [{ attribute: 'Manager', value: 'Erik ten Hag', from: '2024-07-01' }],
          passages: [{ text: 'Erik ten Hag has been manager since 2022. In May 2024 the club beat Manchester City in the final.', from: '2024-07-01' }],
        },
      ],
    };
    const managed = await ask({ question: 'Who manages Manchester City?', asOf: new Date('2025-01-16') }, fakePorts(club));
    assert.equal(managed.adopted, false, `got ${managed.guess}`);
    assert.match(
      managed.decision.cues.join(' '),
      /asks something of "manchester city"/,
      "so is the object of the question's verb; the passage names it, but not where the answer was read",
    );
    for (const question of ['Who is managing Manchester City?', 'Who currently manages Manchester City?', 'Who is Manchester City manager?']) {
      const asked = await ask({ question, asOf: new Date('2025-01-16') }, fakePorts(club));
      assert.equal(asked.adopted, false, `${question} got ${asked.guess}`);
      assert.match(asked.decision.cues.join(' '), /asks something of "manchester city"/, question);
    }
  });

  it('knows a name the facts give as an attribute, though no text writes it ("CTO", "VP" for Vice President)', async () => {
    const company: FakeWorld = {
      snapshots: ['2023-07-01'],
      articles: [
        {
          id: 'OpenAI',
          facts: [
            { attribute: 'CTO', value: 'Mira Murati', from: '2023-07-01' },
            { attribute: 'Vice President', value: 'Anna Makanju', from: '2023-07-01' },
          ],
          passages: [{ text: 'OpenAI is a research organisation in San Francisco.', from: '2023-07-01' }],
        },
      ],
    };
    for (const question of ["Who is OpenAI's CTO?", "Who is OpenAI's VP?"]) {
      const answer = await ask({ question, asOf: new Date('2024-01-01') }, fakePorts(company));
      assert.doesNotMatch(answer.decision.cues.join(' '), /knows nothing about/, question);
    }
    const stranger = await ask({ question: "Who is OpenAI's CFO?", asOf: new Date('2024-01-01') }, fakePorts(company));
    assert.match(stranger.decision.cues.join(' '), /knows nothing about "cfo"/, 'an acronym no attribute spells is still unknown');
  });

  it('answers who won in a period by the title’s holder at its end, who held it by the longest holder', async () => {
    const champions: FakeWorld = {
      snapshots: ['2023-07-01', '2024-07-01', '2024-10-01'],
      articles: [
        {
          id: 'Wimbledon',
          facts: [
            { attribute: 'Champion', value: 'Elena Rybakina', from: '2023-07-01', to: '2024-07-01' },
            { attribute: 'Champion', value: 'Markéta Vondroušová', from: '2024-07-01', to: '2024-10-01' },
            { attribute: 'Champion', value: 'Barbora Krejčíková', from: '2024-10-01' },
          ],
          passages: [
            { text: 'The champion of Wimbledon is Elena Rybakina.', from: '2023-07-01', to: '2024-07-01' },
            { text: 'The champion of Wimbledon is Markéta Vondroušová.', from: '2024-07-01', to: '2024-10-01' },
            { text: 'The champion of Wimbledon is Barbora Krejčíková.', from: '2024-10-01' },
          ],
        },
      ],
    };
    const won = await ask({ question: 'Who won the Wimbledon championship in 2024?', asOf: new Date('2025-02-01') }, fakePorts(champions));
    assert.equal(won.guess, 'Barbora Krejčíková');
    assert.match(won.decision.cues[0]!, /\(the last answer first\)/);
    const held = await ask({ question: 'Who was the Wimbledon champion in 2024?', asOf: new Date('2025-02-01') }, fakePorts(champions));
    assert.equal(held.guess, 'Elena Rybakina');
  });

  it('does not adopt the current value for a past year the question names as an event: the 2024 champion did not win the 2023 final', async () => {
    const league: FakeWorld = {
      snapshots: ['2023-07-01', '2024-07-01'],
      articles: [
        {
          id: 'Champions League',
          facts: [
            { attribute: 'Champion', value: 'Manchester City', from: '2023-07-01', to: '2024-07-01' },
            { attribute: 'Champion', value: 'Real Madrid', from: '2024-07-01' },
          ],
          passages: [{ text: 'The Champions League is a club competition.', from: '2023-07-01' }],
        },
      ],
    };
    const asked = (question: string) => ask({ question, asOf: new Date('2024-10-01') }, fakePorts(league));
    const past = await asked('Who is the Champions League champion of the 2023 final?');
    assert.deepEqual([past.guess, past.adopted], ['Real Madrid', false]);
    assert.match(
      past.decision.cues[0]!,
      /^not adopted: the question names 2023, and "Champion" of Champions League has changed since \(at the end of 2023: "Manchester City"\)/,
    );
    const current = await asked('Who is the Champions League champion of the 2024 final?');
    assert.deepEqual([current.guess, current.adopted], ['Real Madrid', true], 'a year not yet over is no past event');
  });

  it('answers the value before or after the one a question names, not the one before or after today’s', async () => {
    const guessFor = async (question: string) => (await ask({ question, asOf: new Date('2025-03-01') })).guess;
    assert.equal(await guessFor('Who was the prime minister of France after Élisabeth Borne?'), 'Gabriel Attal');
    assert.equal(await guessFor('Who was the prime minister of France after Elisabeth Borne?'), 'Gabriel Attal', 'without the accent');
    assert.equal(await guessFor('Who succeeded Attal as prime minister of France?'), 'Michel Barnier');
    assert.equal(await guessFor('Who was the prime minister of France before Michel Barnier?'), 'Gabriel Attal');
    assert.equal(await guessFor('Before Gabriel Attal, who was the prime minister of France?'), 'Élisabeth Borne');
    for (const question of ['Who succeeded François Bayrou as prime minister of France?', 'Who was the prime minister of France after Napoleon?']) {
      const answer = await ask({ question, asOf: new Date('2025-03-01') });
      assert.ok(
        answer.candidates.every((candidate) => candidate.evidence.kind !== 'FACT'),
        `${question}: no version after the named one (or none naming him), so no fact answers`,
      );
      assert.notEqual(answer.guess, 'François Bayrou', question);
      assert.equal(answer.timeScope?.kind, 'NEXT');
    }
  });

  it('steps over a reworded version of the named value: the same holder is not her own neighbour', async () => {
    const reworded: FakeWorld = {
      snapshots: ['2023-01-01', '2023-07-01', '2024-01-01', '2024-07-01'],
      articles: [
        {
          id: 'France',
          facts: [
            { attribute: 'Prime Minister', value: 'Jean Castex', from: '2023-01-01', to: '2023-07-01' },
            { attribute: 'Prime Minister', value: 'E. Borne', from: '2023-07-01', to: '2024-01-01' },
            { attribute: 'Prime Minister', value: 'Élisabeth Borne', from: '2024-01-01', to: '2024-07-01', change: FactChangeKind.REFINED },
            { attribute: 'Prime Minister', value: 'Gabriel Attal', from: '2024-07-01' },
          ],
          passages: [{ text: 'France is a republic.', from: '2023-01-01' }],
        },
      ],
    };
    const guessFor = async (question: string) => (await ask({ question, asOf: new Date('2024-08-01') }, fakePorts(reworded))).guess;
    assert.equal(await guessFor('Who was the prime minister of France before Élisabeth Borne?'), 'Jean Castex');
    assert.equal(await guessFor('Who was the prime minister of France after E. Borne?'), 'Gabriel Attal');
  });

  it('answers a question about a period at each instant the store can differ, the longest-held answer first', async () => {
    const answer = await ask({ question: 'Who was the prime minister of France between 2024 and 2025?', asOf: new Date('2025-03-01') });
    assert.equal(answer.timeScope?.kind, 'DURING');
    assert.deepEqual(
      [answer.guess, ...answer.otherAnswers.map((other) => other.text)].sort(),
      ['François Bayrou', 'Gabriel Attal', 'Michel Barnier', 'Élisabeth Borne'].sort(),
    );
    assert.equal(answer.guess, 'Élisabeth Borne', 'of the four, the one that held longest in the scope: January to July 2024');
  });

  it('retrieves for an article first stored since the cutoff, whose facts the generator cannot know', async () => {
    const clubs: FakeWorld = {
      snapshots: ['2023-07-01', '2024-07-01'],
      articles: [
        {
          id: 'Real Madrid',
          facts: [{ attribute: 'Head coach', value: 'Carlo Ancelotti', from: '2023-07-01' }],
          passages: [{ text: 'The head coach of Real Madrid is Carlo Ancelotti.', from: '2023-07-01' }],
        },
        {
          id: 'Real Sociedad',
          facts: [{ attribute: 'Head coach', value: 'Imanol Alguacil', from: '2024-07-01' }],
          passages: [{ text: 'The head coach of Real Sociedad is Imanol Alguacil.', from: '2024-07-01' }],
        },
      ],
    };
    const ports = fakePorts(clubs);
    const [asked] = await new QuestionPlanner(ports).plan(
      [{ question: 'Who is the head coach of Real Sociedad?', asOf: new Date('2024-08-01') }],
      new Date(),
      'ask',
    );
    assert.equal(asked!.plans[0]!.memoryFact, null);
    assert.ok(asked!.plans[0]!.decision.cues.includes('Real Sociedad was first stored between cutoff and asOf'), asked!.plans[0]!.decision.cues.join('; '));
    const answer = await ask({ question: 'Who is the head coach of Real Sociedad?', asOf: new Date('2024-08-01') }, ports);
    assert.equal(answer.text, 'Imanol Alguacil');
  });

  it("does not take another attribute's fact at the cutoff for what the generator knows of an attribute new since", async () => {
    const fed: FakeWorld = {
      snapshots: ['2023-07-01', '2024-07-01'],
      articles: [
        {
          id: 'Federal Reserve',
          facts: [
            { attribute: 'Vice Chair for Supervision', value: 'Michael Barr', from: '2023-07-01' },
            { attribute: 'Vice Chair', value: 'Philip Jefferson', from: '2024-07-01' },
          ],
          passages: [
            { text: 'Philip Jefferson is the Vice Chair of the Federal Reserve; Michael Barr is its Vice Chair for Supervision.', from: '2024-07-01' },
          ],
        },
      ],
    };
    const [asked] = await new QuestionPlanner(fakePorts(fed)).plan(
      [{ question: 'Who is the vice chair of the Federal Reserve?', asOf: new Date('2024-08-01') }],
      new Date(),
      'ask',
    );
    assert.equal(asked!.plans[0]!.factMatch?.fact.value, 'Philip Jefferson');
    assert.equal(asked!.plans[0]!.memoryFact, null, 'the cutoff matched the Vice Chair for Supervision, another fact');
  });

  it('answers closed book in NEVER mode, never gated', async () => {
    const answer = await ask({ question: 'Who is the prime minister of France?', asOf: new Date('2024-10-01'), retrieval: RetrievalMode.NEVER });
    assert.equal(answer.rounds.length, 0);
    assert.equal(answer.certainty, null);
    assert.equal(answer.decision.action, DecisionAction.NO_RETRIEVE);
  });

  it('stops between stages once the request is past its deadline', async () => {
    await assert.rejects(
      inRequestScope({ caller: 'late', deadline: Date.now() - 1 }, () => ask({ question: 'Who is the prime minister of France?' })),
      (error: unknown) => error instanceof RequestTimeoutError,
    );
  });

  describe('the period a question asks about, read in the text (event time)', () => {
    /** A career page, known only from one snapshot taken long after. */
    const CAREER = onePageWorld('Gary Mills', [
      'Gary Mills is an English football manager. Before that he coached Tamworth from 2000 to 2005. He managed Alfreton Town from 2005 to 2007, and Gateshead from 2007 to 2009.',
    ]);
    /** France's prime minister as three snapshots say it, each with the date it took office. */
    const OFFICES: FakeWorld = {
      snapshots: ['2024-07-01', '2024-10-01', '2025-01-15'],
      articles: [
        {
          id: 'France',
          passages: [
            { text: 'Gabriel Attal has been prime minister since 9 January 2024.', from: '2024-07-01', to: '2024-10-01' },
            { text: 'Michel Barnier has been prime minister since 5 September 2024.', from: '2024-10-01', to: '2025-01-15' },
            { text: 'François Bayrou has been prime minister since 13 December 2024.', from: '2025-01-15' },
          ],
        },
      ],
    };
    const asked = (world: FakeWorld, question: string, asOf: string) => ask({ question, asOf: new Date(asOf) }, fakePorts(world));

    it('answers each period of a career page from the words its years govern, before the first snapshot too', async () => {
      const answers = await Promise.all(
        ['from 2000 to 2005', 'from 2005 to 2007', 'from 2007 to 2009'].map((period) =>
          asked(CAREER, `Which team did Gary Mills manage ${period}?`, '2022-01-01'),
        ),
      );
      assert.deepEqual(
        answers.map((answer) => answer.guess),
        ['Tamworth', 'Alfreton Town', 'Gateshead'],
      );
      assert.equal(answers[1]!.candidates[0]!.evidence.statedTime?.text, 'from 2005 to 2007');
      assert.equal(answers[1]!.candidates[0]!.evidence.text, 'He managed Alfreton Town', 'the period the question names is not read as its answer');
      assert.match(
        answers[1]!.decision.cues.join(' '),
        /the question asks about "from 2005 to 2007" \(\[2005-01-01, 2008-01-01\), when it held in the world\): read in the text the store knew as of 2022-01-01/,
      );
    });

    it('reads the whole page a search finds first when the question names its subject in other words', async () => {
      const FAMILY = onePageWorld('Zerelda Samuel', [
        'Zerelda Samuel was the mother of the outlaws Frank and Jesse James.',
        'She took Reuben Samuel as her third husband in 1855.',
      ]);
      const answer = await asked(FAMILY, 'Whom did the mother of Frank and Jesse James wed in 1855?', '2022-01-01');
      assert.equal(answer.guess, 'Reuben Samuel');
    });

    it('weighs readings by their own gate where one is trained: the fit beside the reader, and its threshold adopts them', async () => {
      // Trusts a reading whose time fits better than any reading with another answer.
      const readingGate = fakeGate((f) => (f.fitLead! > 0 ? 0.95 : 0.2), { fact: 0.9, text: 0.9 }, 2, READING_GATE_FEATURES);
      const ports = { ...fakePorts(CAREER), readingGate };
      const answer = await ask({ question: 'Which team did Gary Mills manage from 2005 to 2007?', asOf: new Date('2022-01-01') }, ports);
      assert.equal(answer.guess, 'Alfreton Town');
      assert.equal(answer.adopted, true);
      assert.equal(answer.certainty?.reliable, 0.95);
      const stricter = { ...ports, readingGate: fakeGate((f) => (f.fitLead! > 0 ? 0.95 : 0.2), { fact: 0.99, text: 0.99 }, 2, READING_GATE_FEATURES) };
      const declined = await ask({ question: 'Which team did Gary Mills manage from 2005 to 2007?', asOf: new Date('2022-01-01') }, stricter);
      assert.equal(declined.adopted, false);
      assert.match(declined.decision.cues[0]!, /p\(reliable\) 0\.95 is below 0\.99/);
    });

    it('answers a period of years with the reading its gate trusts most, and a day with the best-fitting one', async () => {
      // A gate that trusts a reading the less its time fits, and the page's passages read beside them, which fit not at all, most: what it chooses is not what the fit would.
      const readingGate = fakeGate((f) => 1 - f.fit!, { fact: 0.99, text: 0.99 }, 2, READING_GATE_FEATURES);
      const years = await ask(
        { question: 'Which team did Gary Mills manage from 2005 to 2007?', asOf: new Date('2022-01-01') },
        { ...fakePorts(CAREER), readingGate },
      );
      assert.equal(years.guess, 'Tamworth', "2000–2005 fits least, and the gate's choice stands");
      const day = await ask(
        { question: 'Who was the prime minister of France on 10 September 2024?', asOf: new Date('2025-02-01') },
        { ...fakePorts(OFFICES), readingGate },
      );
      assert.equal(day.guess, 'Michel Barnier', 'the latest claim holding on the day, whatever the gate prefers');
    });

    it('answers for the time the text gives another event ("when Paris hosted the Olympics"), and abstains where it gives none', async () => {
      const withGames: FakeWorld = {
        ...OFFICES,
        articles: [
          ...OFFICES.articles,
          { id: 'Paris', passages: [{ text: 'Paris hosted the Summer Olympics in July 2024, a century after it last had.', from: '2024-10-01' }] },
        ],
      };
      const games = await asked(withGames, 'Who was the prime minister of France when Paris hosted the Summer Olympics?', '2025-02-01');
      assert.equal(games.guess, 'Gabriel Attal', 'in office in July 2024, not today’s Bayrou');
      assert.deepEqual(games.timeScope, {
        kind: 'WHEN',
        text: 'when Paris hosted the Summer Olympics',
        from: new Date('2024-07-01'),
        to: new Date('2024-08-01'),
      });
      assert.match(
        games.decision.cues.join(' '),
        /the question asks about the time of "Paris hosted the Summer Olympics": the text states "in July 2024" for it in Paris/,
      );
      const followUp = await ask(
        {
          question: 'Who was the prime minister of France when Paris hosted the Summer Olympics?',
          asOf: new Date('2025-02-01'),
          conversation: [{ question: 'Who is the president of France?', answer: 'Emmanuel Macron' }],
        },
        fakePorts(withGames),
      );
      assert.equal(followUp.timeScope, null, 'a follow-up reads no text: the event dates nothing, and asOf answers');
      assert.notEqual(followUp.guess, null);
      const undated = await asked(withGames, 'Who was the prime minister of France when the Eiffel Tower was repainted?', '2025-02-01');
      assert.equal(undated.guess, null, 'no time given: no answer, not the current one');
      assert.match(
        undated.decision.cues[0]!,
        /asks about the time of "when the Eiffel Tower was repainted", which nothing the store knew as of 2025-02-01 dates/,
      );
    });

    it('answers the value after or before a named one from the time the text gives it, the nearest first', async () => {
      // The clock's answer from a passage stands where the gate adopts it: here it adopts only facts.
      const asked = (world: FakeWorld, question: string, asOf: string) =>
        ask(
          { question, asOf: new Date(asOf) },
          fakePorts(
            world,
            fakeGate((f) => (f.isFact ? 0.9 : 0.3)),
          ),
        );
      const after = await asked(CAREER, 'Which team did Gary Mills manage after Alfreton Town?', '2022-01-01');
      assert.equal(after.guess, 'Gateshead');
      assert.match(
        after.decision.cues.join(' '),
        /the question asks for the value after "Alfreton Town": the text states "from 2005 to 2007" for it in Gary Mills/,
      );
      const before = await asked(CAREER, 'Which team did Gary Mills manage before Alfreton Town?', '2022-01-01');
      assert.equal(before.guess, 'Tamworth');
      const club: FakeWorld = {
        snapshots: ['2023-07-01', '2024-07-01'],
        articles: [
          {
            id: 'Liverpool',
            passages: [
              { text: 'Jurgen Klopp has been manager since 2015.', from: '2023-07-01', to: '2024-07-01' },
              { text: 'Virgil Dijk has been club captain since 2023. Arne Slot has been head coach since 2024, succeeding Jurgen Klopp.', from: '2024-07-01' },
            ],
          },
        ],
      };
      const successor = await asked(club, 'Who took over at Liverpool after Jurgen Klopp?', '2025-01-15');
      assert.equal(successor.guess, 'Arne Slot', 'a reading that names Klopp too, before the nearer captain');
      const unnamed = await asked(CAREER, 'Which team did Gary Mills manage after Nuneaton Borough?', '2022-01-01');
      assert.equal(unnamed.adopted, false);
      assert.match(
        unnamed.decision.cues[0]!,
        /not adopted: neither the history of the asked fact nor the text the store knew as of 2022-01-01 dates "Nuneaton Borough"/,
      );
    });

    it('answers "the first" and "last" with the earliest and the latest reading, or a fact that is the first of its kind', async () => {
      const career = onePageWorld('Gary Mills', [
        'Gary Mills was born in Northampton in 1961. He managed Tamworth from 2000 to 2005. He managed Alfreton Town from 2005 to 2007, and Gateshead from 2007 to 2009.',
      ]);
      // The sentence of a reading says what it is about ("managed"), not only the words its time governs ("and Gateshead").
      const first = await asked(career, 'Which team did Gary Mills manage first?', '2022-01-01');
      const last = await asked(career, 'Which team did Gary Mills manage last?', '2022-01-01');
      assert.deepEqual([first.guess, last.guess], ['Tamworth', 'Gateshead']);
      const office: FakeWorld = {
        snapshots: ['2024-07-01'],
        articles: [
          {
            id: 'Prime Minister of the United Kingdom',
            facts: [
              { attribute: 'Prime Minister', value: 'Keir Starmer', from: '2024-07-01' },
              { attribute: 'First holder', value: 'Robert Walpole', from: '2024-07-01' },
            ],
            passages: [{ text: 'Keir Starmer has been prime minister since 5 July 2024.', from: '2024-07-01' }],
          },
        ],
      };
      const founder = await asked(office, 'Who was the first prime minister of the United Kingdom?', '2025-01-15');
      assert.equal(founder.guess, 'Robert Walpole', "today's prime minister is no answer to the first");
    });

    it('abstains when nothing in the text states a time in the period, never "nothing is known then"', async () => {
      const answer = await asked(CAREER, 'Which team did Gary Mills manage from 1990 to 1995?', '2022-01-01');
      assert.equal(answer.guess, null);
      assert.match(answer.decision.cues[0]!, /nothing the store knew as of 2022-01-01 states a time in the asked period \("from 1990 to 1995"\)/);
    });

    it("reads the named page's passages most like the question beside the readings, answers from them only where no reading does, and never adopts that", async () => {
      const prisoner = (escape: string): FakeWorld =>
        onePageWorld('Diane Downs', [
          `Diane Downs was convicted of murder in 1984. ${escape}`,
          'Downs was incarcerated at the Oregon Women Correctional Center in Salem.',
          'Downs wrote a book about the trial.',
        ]);
      // A gate that trusts the passage, which states no time in the period, more than any reading.
      const readingGate = fakeGate((f) => (f.fit! > 0 ? 0.5 : 0.999), { fact: 0.99, text: 0.99 }, 2, READING_GATE_FEATURES);
      const askAbout = (world: FakeWorld) =>
        ask(
          { question: 'Which prison was Diane Downs incarcerated in from 1986 to 1987?', asOf: new Date('2022-01-01') },
          { ...fakePorts(world), readingGate },
        );
      const unnamed = await askAbout(prisoner('She escaped from the prison in 1987.'));
      assert.equal(unnamed.guess, 'Oregon Women Correctional Center', 'the reading of 1987 names no prison');
      assert.equal(unnamed.adopted, false, 'p(reliable) 0.999 is above the threshold, but no time its words state fits the period');
      assert.match(unnamed.decision.cues[0]!, /not adopted: no time the words read state fits the asked period/);
      const read = unnamed.rounds.flatMap((round) => round.hits).map((hit) => hit.text);
      assert.ok(read.includes('She escaped from the prison.'), 'the reading of 1987');
      const [incarcerated, wrote] = ['Downs was incarcerated', 'Downs wrote'].map((start) => read.findIndex((text) => text.startsWith(start)));
      assert.ok(incarcerated >= 0 && (wrote === -1 || incarcerated < wrote), "the passage sharing more of the question's rarer words first");
      const named = await askAbout(prisoner('She escaped from Salem Prison in 1987.'));
      assert.equal(named.guess, 'Salem Prison', 'a reading that answers comes first, whatever the gate says of the passage');
    });

    it('prefers the date the text states over the snapshot clock (Barnier, from 5 September 2024), and still answers August with Attal', async () => {
      const tenth = await asked(OFFICES, 'Who was the prime minister of France on 10 September 2024?', '2024-10-01');
      assert.equal(tenth.guess, 'Michel Barnier', 'the snapshot clock alone says Attal: the 2024-07-01 version was valid until 1 October');
      const later = await asked(OFFICES, 'Who was the prime minister of France on 10 September 2024?', '2025-02-01');
      assert.equal(later.guess, 'Michel Barnier', 'known as of 2025 from the version of 2024-10-01, which no longer holds');
      const august = await asked(OFFICES, 'Who was the prime minister of France in August 2024?', '2024-10-01');
      assert.equal(august.guess, 'Gabriel Attal');
    });

    /** Infobox facts a snapshot updated before its text: the text still names the former prime minister. */
    const FACTS_AND_TEXT: FakeWorld = {
      snapshots: ['2023-07-01', '2024-07-01', '2024-10-01'],
      articles: [
        {
          id: 'France',
          facts: [
            { attribute: 'Prime Minister', value: 'Gabriel Attal', from: '2024-07-01', to: '2024-10-01' },
            { attribute: 'Prime Minister', value: 'Michel Barnier', from: '2024-10-01' },
          ],
          passages: [
            { text: 'Élisabeth Borne has been prime minister since 16 May 2022.', from: '2024-07-01', to: '2024-10-01' },
            { text: 'Michel Barnier has been prime minister since 5 September 2024.', from: '2024-10-01' },
          ],
        },
      ],
    };

    it('lets the text overrule the clock’s fact only with news newer than the snapshot that said it', async () => {
      const guesses = await Promise.all(
        [
          ['Who was the prime minister of France on 10 September 2024?', '2024-10-01'],
          ['Who was the prime minister of France in August 2024?', '2024-10-01'],
        ].map(async ([question, asOf]) => (await asked(FACTS_AND_TEXT, question!, asOf!)).guess),
      );
      assert.deepEqual(guesses, [
        'Michel Barnier', // stated from 5 September, after the 2024-07-01 snapshot that said Attal
        'Gabriel Attal', // the text's "since 16 May 2022" (Borne) is older than the snapshot's fact
      ]);
    });
  });
});
