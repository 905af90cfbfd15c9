import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exactMatch, f1Score, matchAccuracy } from '../../src/qa/answerMetrics.js';
import { trainSoftmaxRegression } from '../../src/learning/softmaxRegression.js';
import { analyseQuestion, expectedAnswerType, questionNames } from '../../src/qa/question.js';
import { namedBeyondRoles, namesBesideTitles, respell, roleWordsOf, SubjectIndex } from '../../src/qa/subjects.js';
import { roleAgreement } from '../../src/qa/roleAcronyms.js';
import { typeMisfit } from '../../src/qa/typeMisfit.js';
import { linkedOwnerObjection } from '../../src/qa/unlinkedOwners.js';
import { FactLinker } from '../../src/qa/factLinker.js';
import { FactChangeKind, type FactRecord } from '../../src/domain/model.js';
import { contentTerms } from '../../src/text/language.js';
import { AnswerType } from '../../src/text/annotation.js';
import { Classifier } from '../../src/native/index.js';

describe('answer metrics and question reading', () => {
  it('scores with SQuAD normalisation', () => {
    assert.equal(exactMatch('The Denver Broncos.', ['Denver Broncos']), 1);
    assert.equal(exactMatch('Broncos', ['Denver Broncos']), 0);
    assert.equal(f1Score('Broncos', ['Denver Broncos']), 2 / 3);
    assert.equal(matchAccuracy('they were the Denver Broncos', ['Denver Broncos']), 1);
    assert.equal(matchAccuracy('Denver', ['Denver Broncos']), 0);
  });

  it('takes no time phrase for a name', () => {
    const names = (question: string, timePhrase: string) => questionNames(analyseQuestion(question), timePhrase);
    assert.deepEqual(names("Who was Starbucks' chief executive in mid-2024?", 'in mid-2024'), ['starbucks']);
    assert.deepEqual(names('Who was the CEO of Starbucks in September 2024?', 'in September 2024'), ['ceo of starbucks']);
    assert.deepEqual(names('Who was the CEO of Starbucks in September 2024?', ''), ['ceo of starbucks', 'september']);
  });

  it('reads the expected answer type from the wh-phrase', () => {
    assert.equal(expectedAnswerType('Who is the prime minister of France?'), AnswerType.NAME);
    assert.equal(expectedAnswerType('In what year did the war end?'), AnswerType.DATE);
    assert.equal(expectedAnswerType('How many people live there?'), AnswerType.NUMBER);
    assert.equal(expectedAnswerType('Where is the summit?'), AnswerType.PLACE);
    assert.equal(expectedAnswerType('What is the currency of France?'), AnswerType.THING);
  });

  it('links a question to the articles it names, in any order, also by a short name, an abbreviation, an acronym, a demonym or across a typo', () => {
    const index = new SubjectIndex([
      { id: 'France', title: 'France' },
      { id: 'PMUK', title: 'Prime Minister of the United Kingdom' },
      { id: 'MU', title: 'Manchester United F.C.' },
      { id: 'Speaker', title: 'Speaker of the United States House of Representatives' },
      { id: 'WHO', title: 'World Health Organization' },
      { id: 'Chess', title: 'World Chess Championship' },
      { id: 'Madrid', title: 'Real Madrid CF' },
      { id: 'Liverpool', title: 'Liverpool F.C.' },
      { id: 'Mali', title: 'Mali' },
      { id: 'BoE', title: 'Bank of England' },
      { id: 'Boeing', title: 'Boeing' },
      { id: 'Netherlands', title: 'Netherlands' },
    ]);
    const linked = (question: string): Array<[string, number]> => index.link(question).map((s) => [s.articleId, Number(s.coverage.toFixed(2))]);
    assert.deepEqual(linked('Who is the prime minister of the United Kingdom?')[0], ['PMUK', 1]);
    assert.deepEqual(linked('Who manages Manchester United these days?'), [['MU', 1]]);
    assert.deepEqual(linked('Who manages Man Utd?'), [['MU', 1]]);
    assert.deepEqual(linked('Who leads the US House?'), [['Speaker', 0.6]]);
    assert.deepEqual(linked('Who heads the WHO?'), [['WHO', 1]]);
    assert.deepEqual(linked('who manages mu')[0], ['MU', 1], 'typed in lower case, a short word may be an acronym');
    assert.deepEqual(linked('Who manages mu?'), [], 'but not beside capitals');
    assert.deepEqual(linked('Who is governor of the BoE?'), [['BoE', 1]], 'capitals of a mixed-case acronym, not the start of Boeing');
    assert.deepEqual(linked('Who runs Boeing?'), [['Boeing', 1]]);
    assert.deepEqual(
      linked('Who is the Dutch prime minister?'),
      [
        ['Netherlands', 1],
        ['PMUK', 0.5],
      ],
      'a demonym names its country',
    );
    assert.deepEqual(linked('Who is the UK prime minister?'), [['PMUK', 1]], 'in another order than the title');
    assert.deepEqual(linked('Who sells dutch ovens?'), [], 'a demonym is capitalised');
    assert.deepEqual(linked('who is the dutch prime minister')[0], ['Netherlands', 1], 'unless the question is typed all in lower case');
    assert.deepEqual(linked('who heads the who'), [], 'a function word typed in lower case is still none');
    assert.deepEqual(linked('Who painted the Dutch Reach?'), [], 'a demonym before a capitalised word is part of a name');
    assert.deepEqual(linked('Who is the British prime minister?'), [['PMUK', 1]]);
    assert.deepEqual(linked("Who is Britain's deputy PM?"), [['PMUK', 1]], 'the last word of Great Britain names the country');
    assert.deepEqual(linked('Who is premier of Holland?')[0], ['Netherlands', 1], 'another name of one word');
    assert.deepEqual(linked('Who is the current world chess champion?'), [['Chess', 1]]);
    assert.deepEqual(linked('Which club plays at Anfield?'), [], 'a lower-case word is no abbreviation');
    assert.deepEqual(linked('Who is the prime minister of Spain?'), [['PMUK', 0.5]], 'half named: a candidate, not a match');
    assert.deepEqual(linked('who manages real madird?'), [['Madrid', 1]], 'two letters swapped');
    assert.deepEqual(linked('who wears the armband at liverpol?'), [['Liverpool', 1]], 'a letter left out');
    assert.deepEqual(linked('Who won the Frnace election?')[0], ['France', 1], 'in a name written with a capital');
    assert.deepEqual(linked('How is mail sorted?'), [], 'a short word is not matched across a typo');
    assert.equal(index.unnamed('France')?.coverage, 0);
    const respelled = (question: string) => respell(question, index.typos(question));
    assert.equal(respelled('who manages real madird?'), 'who manages real madrid?');
    assert.equal(respelled('Who won the Frnace election?'), 'Who won the France election?');
    assert.equal(respelled('Who manages Man Utd?'), 'Who manages Man Utd?', 'short forms are not typos');
    assert.equal(respelled('Which club plays at Anfeild?'), 'Which club plays at Anfeild?', 'no title named, nothing respelled');
  });

  it('links a title across every typo of one letter, among thousands of others', () => {
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const others = Array.from({ length: 3000 }, (_, i) => {
      const word = (n: number) => Array.from({ length: 5 + (n % 4) }, (_, j) => letters[(n * 7 + j * 13 + i) % 26]).join('');
      return { id: `other ${i}`, title: `${word(i)} ${word(i + 1)}` };
    });
    const index = new SubjectIndex([...others, { id: 'Liverpool', title: 'Liverpool F.C.' }]);
    const word = 'liverpool';
    const typos = Array.from(word, (_, i) => [
      word.slice(0, i) + word.slice(i + 1),
      word.slice(0, i) + 'x' + word.slice(i),
      word.slice(0, i) + (word[i] === 'z' ? 'y' : 'z') + word.slice(i + 1),
      word.slice(0, i) + word.slice(i + 1, i + 2) + word[i] + word.slice(i + 2),
    ]).flat();
    for (const typo of new Set(typos.filter((typo) => typo !== word))) {
      assert.deepEqual(
        index
          .link(`who wears the armband at ${typo}?`)
          .filter((s) => s.coverage === 1)
          .map((s) => s.articleId),
        ['Liverpool'],
        typo,
      );
    }
  });

  it('links no title by a function word, a month, a word of its brackets, or a real word near a title word (found on TimeQA)', () => {
    const index = new SubjectIndex(
      ['Simferopol', 'Fort Tilden', 'Andrzej Panufnik', 'Florence', 'Brad Wenstrup', 'Paul Sturrock', 'Zerelda James', 'Leimen (Baden)', 'Alan Baró'].map(
        (title) => ({ id: title, title }),
      ),
    );
    const index2 = new SubjectIndex([{ id: 'Wheel', title: 'Wheel of Fortune (American game show)' }]);
    const linked = (question: string, acrossTypos = true): string[] => index.link(question, { acrossTypos }).map((s) => `${s.articleId} ${s.coverage}`);
    assert.deepEqual(linked('Who was the head of the party from Sep 1990 to Sep 2000?'), [], 'a month is no abbreviation of Simferopol');
    assert.deepEqual(linked('What nationality was the conductor Sir Panufnik?'), ['Andrzej Panufnik 0.5']);
    assert.deepEqual(linked('Which scholar worked for Mason College, and when?'), [], '"for" is no Fort, "and" no Andrzej');
    assert.deepEqual(linked('Who commanded the Swedish Air Force?'), [], '"Force" is no contraction of Florence');
    assert.deepEqual(linked('Who ran the square in West Berlin?'), []);
    assert.deepEqual(linked("What name did Hitler's sister Paula use?"), [], 'Paula is not Paul');
    assert.deepEqual(linked('Where did the Yankees play home games?', false), [], 'respelled already: "games" is a word, not James');
    assert.deepEqual(linked('Where did the Yankees play home games?'), ['Zerelda James 0.5'], 'across typos, as `typos` looks for them');
    assert.deepEqual(linked('Who led the research institute in Heidelberg, Baden?'), [], 'the brackets tell pages apart; they do not name one');
    assert.deepEqual(linked('Which club did Alan Baro play for?'), ['Alan Baró 1'], 'diacritics aside');
    const more = new SubjectIndex(['Arsenal F.C.', 'Latvia', 'Olympique de Marseille', 'C (programming language)'].map((title) => ({ id: title, title })));
    const linkedMore = (question: string): string[] => more.link(question).map((s) => `${s.articleId} ${s.coverage}`);
    assert.deepEqual(linkedMore('Who coaches Al Ahly?'), [], 'two letters are no short form');
    assert.deepEqual(linkedMore('Who won La Liga in 2010?'), []);
    assert.deepEqual(linkedMore('who won la liga in mar 2010'), [], 'a month typed in lower case is no name either');
    assert.deepEqual(linkedMore('Who managed Marseilles in 2010?'), ['Olympique de Marseille 0.5'], 'a word beginning like a month is no month');
    assert.deepEqual(linkedMore('Who designed the programming language C?'), ['C (programming language) 1'], 'a name of filler alone is named by its brackets');
    assert.deepEqual(
      index2.link('Who hosted wheel of fortune in 1981?').map((s) => s.coverage),
      [1],
      'named by the words before the brackets',
    );
  });

  it('reads a name that joins a title word to a word no title has as another name: Real Sociedad is not Real Madrid', () => {
    const titles = [
      'Real Madrid CF',
      'Manchester United F.C.',
      'President of the European Council',
      'Politics of Cambodia',
      'UEFA Champions League',
      '2030 Winter Olympics',
    ];
    const index = new SubjectIndex(titles.map((title) => ({ id: title, title })));
    const beside = (question: string): string[] => namesBesideTitles(questionNames(analyseQuestion(question)), index.link(question));
    assert.deepEqual(beside('Who is the head coach of Real Sociedad?'), ['real sociedad']);
    assert.deepEqual(beside("Who is Manchester City's captain?"), ['manchester city']);
    assert.deepEqual(beside('Who is the President of the European Commission?'), ['european commission']);
    assert.deepEqual(beside('Which French regions will host the 2030 Winter Games?'), ['winter games'], "for the caller to look up in the store's text");
    assert.deepEqual(beside('Who is the head coach of Real Madrid?'), []);
    assert.deepEqual(beside('Who manages Man Utd?'), [], 'a short form linking read as the title word');
    assert.deepEqual(beside('Who is the champion of the UEFA Champions League?'), [], 'an inflected title word');
    assert.deepEqual(beside('Who chairs the Cambodian Senate?'), [], 'a demonym is no title word');
  });

  it('does not link a title a question names only by a role: "the uefa president" is not the President of Argentina', () => {
    const index = new SubjectIndex(
      ['President of Argentina', 'President of the European Council', 'Manchester United F.C.', 'Bank of England'].map((title) => ({ id: title, title })),
    );
    const roleWords = roleWordsOf(['President', 'Vice President', 'Manager', 'Captain', 'Bank Rate', 'Champion', 'League']);
    const named = (question: string): string[] => namedBeyondRoles(index.link(question), roleWords).map((subject) => subject.title);
    assert.deepEqual(named("Who's the UEFA president?"), []);
    assert.deepEqual(named('Who is the president?'), []);
    assert.deepEqual(named("Who is Argentina's president?"), ['President of Argentina']);
    assert.deepEqual(named('Who is the President of the European Council?'), ['President of the European Council'], 'the whole title, though all role words');
    assert.deepEqual(named('Who is the Manchester United manager?'), ['Manchester United F.C.']);
    assert.deepEqual(named('Who is the governor of the bank?'), ['Bank of England'], 'a role is the head of an attribute\'s name, not "bank" of "Bank Rate"');
    const leagues = new SubjectIndex([{ id: 'UEFA Champions League', title: 'UEFA Champions League' }]);
    assert.deepEqual(
      namedBeyondRoles(leagues.link('Who won the Champion League?'), roleWords).map((subject) => subject.title),
      ['UEFA Champions League'],
      'a role word the title does not hold as written ("Champions") names the title',
    );
  });

  it('reads the head of an attribute name as its role word', () => {
    assert.deepEqual(
      [
        ...roleWordsOf(['FIFA President', 'President-elect', 'Director-General', 'Party of the prime minister', 'Opened by', 'Named after', 'Bank Rate']),
      ].sort(),
      ['director', 'party', 'president', 'rate'],
    );
  });

  it('tells the role an acronym names from another of its shape, and a role from another of its head: the CFO is not the CEO', () => {
    const cases: Array<[string, string, string, string]> = [
      ["Who is Boeing's chief financial officer?", 'CEO', 'Boeing', 'contradicts'],
      ["Who is Boeing's CFO?", 'CEO', 'Boeing', 'contradicts'],
      ['Who is the CEO of Boeing?', 'CEO', 'Boeing', 'names'],
      ["Who is Boeing's chief executive officer?", 'CEO', 'Boeing', 'names'],
      ['Who is the CFO?', 'Chief executive officer', 'Boeing', 'contradicts'],
      ["Who was Starbucks' chief executive in mid-2024?", 'CEO', 'Starbucks', 'names'],
      ['Who is the current chief of Boeing operations?', 'CEO', 'Boeing', 'silent'],
      ['Who is the FIFA president?', 'President', 'FIFA', 'silent'],
      ["Who is Germany's foreign minister?", 'Finance Minister', 'Germany', 'contradicts'],
      ["Who is Germany's finance minister?", 'Finance Minister', 'Germany', 'names'],
      ['Who is the new minister of finance?', 'Finance Minister', 'Germany', 'names'],
      ["Who is Liverpool's current head coach?", 'Head coach', 'Liverpool F.C.', 'names'],
      ["Who is Liverpool's assistant coach?", 'Head coach', 'Liverpool F.C.', 'contradicts'],
      ['Who is the Germany minister?', 'Finance Minister', 'Germany', 'silent'],
      ['What rate has the Bank of England set?', 'Bank rate', 'Bank of England', 'silent'],
      ["Who is speaker of Taiwan's legislature?", 'Legislative speaker', 'Taiwan', 'silent'],
      ['Which outbreak is a helath emergency?', 'Public health emergency', 'WHO', 'names'],
      ['Which outbreak is a global health emergency?', 'Current emergency', 'WHO', 'silent'],
      ["Who is Bayern's coach?", 'Head coach', 'FC Bayern Munich', 'silent'],
      ['Who is the federal minister of finance?', 'Finance Minister', 'Germany', 'names'],
      ['Who is the German foreign minister?', 'Finance Minister', 'Germany', 'contradicts'],
      ['Who is the German finance minister?', 'Finance Minister', 'Germany', 'names'],
      ['Who is the reigning champion?', 'World champion', 'Formula One', 'silent'],
      ['Who is the curent coach?', 'Head coach', 'Liverpool F.C.', 'silent'],
      ['Who is the deputy prime minister?', 'Prime minister', 'France', 'silent'],
      ['Who is the assistant head coach?', 'Head coach', 'Liverpool F.C.', 'silent'],
      ['What is the policy base rate?', 'Policy rate', 'Federal Reserve', 'silent'],
      ["Who is Manchester United's chief executive?", 'Manager', 'Manchester United F.C.', 'contradicts'],
      ["Who is Bayern's chief executive?", 'CEO', 'FC Bayern Munich', 'names'],
      ["Who is the ECB's chief economist?", 'Chief Economist', 'European Central Bank', 'names'],
      ["Who is OpenAI's chief scientist?", 'CEO', 'OpenAI', 'contradicts'],
      ['Who is the chief of staff?', 'Chief of Staff', 'White House', 'silent'],
      ['Who is the Chief Minister of Punjab?', 'Incumbent', 'Chief Minister of Punjab', 'silent'],
    ];
    // Each subject as the linker names it in the question ("German" for Germany).
    const subjects = new SubjectIndex([...new Set(cases.map(([, , title]) => title))].map((title) => ({ id: title, title })));
    for (const [question, attribute, title, expected] of cases) {
      const subject = subjects.link(question).find((linked) => linked.title === title) ?? { title, words: [] };
      assert.equal(roleAgreement(question, attribute, subject), expected, question);
    }
  });

  // Every attribute is equally near by meaning here: only the words and the acronyms decide.
  const equallyNear = async (texts: readonly string[]) => new Float32Array(texts.length * 2).fill(Math.SQRT1_2);
  const fact = (subject: string, attribute: string, value: string): FactRecord => ({
    ...{ id: `${subject}/${attribute}`, subject, attribute, value, change: FactChangeKind.NEW, addedMembers: [], removedMembers: [] },
    ...{ validFrom: new Date('2024-01-01'), validTo: null, recordedAt: new Date('2024-01-01'), eventTimes: [] },
  });
  const linkedBy = (linker: FactLinker, title: string) => async (question: string, attributes: FactRecord[]) => {
    const subject = { articleId: title, title, coverage: 1, words: [...contentTerms(title)] };
    const asked = { text: question, vector: Float32Array.of(Math.SQRT1_2, Math.SQRT1_2), terms: contentTerms(question) };
    return (await linker.match(asked, [{ subject, facts: attributes }]))?.fact.value ?? null;
  };

  it('links no fact when the question names a role the subject lacks, rather than the nearest one it has', async () => {
    const linked = linkedBy(new FactLinker(equallyNear, 2), 'Boeing');
    const ceoOnly = [fact('Boeing', 'CEO', 'Kelly Ortberg'), fact('Boeing', 'Chairman', 'Steve Mollenkopf')];
    assert.equal(await linked("Who is Boeing's chief financial officer?", ceoOnly), null);
    assert.equal(await linked("Who is Boeing's chief executive officer?", ceoOnly), 'Kelly Ortberg');
    assert.equal(await linked("Who is Boeing's chief financial officer?", [...ceoOnly, fact('Boeing', 'CFO', 'Brian West')]), 'Brian West');
    assert.equal(await linked("Who is Boeing's chairman?", ceoOnly), 'Steve Mollenkopf');
    assert.equal(await linked("who is boeing's cfo", ceoOnly), null, 'an acronym written in lower case');
    assert.equal(await linked("who's boeing's ceo", ceoOnly), 'Kelly Ortberg');
  });

  it("links no fact when the question names an attribute other articles have and the subject lacks: Starbucks' chairman is not its CEO", async () => {
    // Boeing has a CEO and a Chairman, Liverpool a Captain and a Head coach; Manchester United calls its head coach Manager.
    const together = [
      ['CEO', 'Chairman'],
      ['Captain', 'Head coach'],
      ['Captain', 'Manager'],
    ];
    const vocabulary = (names: string[]) => ({
      names: () => names,
      heldTogether: async (first: string, second: string) => together.some((pair) => pair.includes(first) && pair.includes(second)),
    });
    const store = ['CEO', 'Chairman', 'Captain', 'Head coach', 'Manager', 'Chair', 'Incumbent'];
    const starbucks = linkedBy(new FactLinker(equallyNear, 2, vocabulary(store)), 'Starbucks');
    const ceo = fact('Starbucks', 'CEO', 'Brian Niccol');
    assert.equal(await starbucks("who is starbucks' chairman", [ceo]), null);
    assert.equal(await starbucks("who is starbucks' ceo", [ceo]), 'Brian Niccol');
    assert.equal(await starbucks("who is starbucks' chairman", [ceo, fact('Starbucks', 'Chairman', 'Mellody Hobson')]), 'Mellody Hobson');
    assert.notEqual(
      await starbucks("who chairs starbucks' board", [ceo, fact('Starbucks', 'Chairman', 'Mellody Hobson')]),
      null,
      'not refused: "Chair" is the Chairman\'s word',
    );
    assert.equal(await starbucks('who chaired starbucks in 2023', [ceo]), 'Brian Niccol', 'a verb is no attribute named word for word');
    const madrid = linkedBy(new FactLinker(equallyNear, 2, vocabulary(store)), 'Real Madrid CF');
    const coach = fact('Real Madrid CF', 'Head coach', 'Carlo Ancelotti');
    assert.equal(await madrid("who is real madrid's captain", [coach]), null);
    assert.equal(await madrid("who is real madrid's manager", [coach]), 'Carlo Ancelotti', 'no article has a Manager beside a Head coach: another name of it');
    const council = linkedBy(new FactLinker(equallyNear, 2, vocabulary([...store, 'President'])), 'President of the European Council');
    const incumbent = fact('President of the European Council', 'Incumbent', 'Charles Michel');
    assert.equal(
      await council('who is the president of the european council', [incumbent]),
      'Charles Michel',
      "the subject's own word names no other attribute",
    );
  });

  it('reads a name after "in" as no answer to who, and one after "by" as no answer to where', () => {
    const final = 'Manchester City won the 2023 final in Istanbul, defeating Inter Milan 1–0.';
    assert.match(typeMisfit(AnswerType.NAME, 'Istanbul', final) ?? '', /^"Istanbul" reads as a place or a time \("in Istanbul"\)/);
    assert.equal(typeMisfit(AnswerType.NAME, 'Inter Milan', final), null);
    assert.equal(typeMisfit(AnswerType.PLACE, 'Istanbul', final), null);
    assert.equal(typeMisfit(AnswerType.NAME, 'Istanbul', `${final} Istanbul bid again.`), null, 'one mention not after "in" may be a name');
    assert.equal(typeMisfit(AnswerType.NAME, 'James Cameron', "He starred in James Cameron's film."), null, 'a possessive says nothing');
    assert.equal(typeMisfit(AnswerType.NAME, 'the board', 'Power lies in the board.'), null, 'only names are typed by it');
    assert.match(typeMisfit(AnswerType.PLACE, 'Gustave Eiffel', 'The tower was designed by Gustave Eiffel.') ?? '', /reads as who did something/);
    assert.equal(typeMisfit(AnswerType.THING, 'Istanbul', final), null);
  });

  it("wants an answer to France's question from France's page, or from words that name France", () => {
    const france = { articleId: 'France', title: 'France', coverage: 1, words: ['france'] };
    const tour = { articleId: 'Tour de France', title: 'Tour de France', coverage: 1 / 3, words: ['france'] };
    const germany = { articleId: 'Germany', text: 'Christian Lindner is the finance minister.' };
    const asked = "Who is France's finance minister?";
    assert.match(linkedOwnerObjection(asked, [france, tour], germany) ?? '', /asks something of "France".*read in Germany/);
    assert.equal(linkedOwnerObjection(asked, [france, tour], { articleId: 'France', text: 'Bruno Le Maire.' }), null);
    assert.equal(linkedOwnerObjection(asked, [france], { articleId: 'Europe', text: 'The French finance minister, Bruno Le Maire, of France.' }), null);
    assert.equal(linkedOwnerObjection('Who is the finance minister of France?', [france], germany), null, 'no possessive: no owner');
    const netherlands = { articleId: 'Netherlands', title: 'Netherlands', coverage: 1, words: ['dutch'] };
    const dutch = "who's the dutch finance minister";
    assert.match(linkedOwnerObjection(dutch, [netherlands], germany) ?? '', /asks something of "Netherlands".*read in Germany/, 'a demonym names an owner');
    assert.equal(linkedOwnerObjection(dutch, [netherlands], { articleId: 'Netherlands', text: 'Eelco Heinen.' }), null);
    assert.equal(linkedOwnerObjection(dutch, [netherlands], { articleId: 'Europe', text: 'The Dutch finance minister, Eelco Heinen.' }), null);
    const games = { articleId: '2030 Winter Olympics', title: '2030 Winter Olympics', coverage: 2 / 3, words: ['2030', 'winter'] };
    const regions = { articleId: '2030 Winter Olympics', text: "Auvergne-Rhône-Alpes and Provence-Alpes-Côte d'Azur" };
    const hosts = 'Which French regions will host the 2030 Winter Games?';
    const franceByAdjective = { ...france, words: ['french'] };
    assert.equal(linkedOwnerObjection(hosts, [franceByAdjective, games], regions), null, 'read in an article the question names');
    assert.match(linkedOwnerObjection(hosts, [franceByAdjective, games], { ...regions, articleId: 'Italy' }) ?? '', /asks something of "France"/);
  });

  it('reads a date as no answer to who or where', () => {
    const founded = 'Boeing was founded on 15 July 1916 by William Boeing.';
    assert.match(typeMisfit(AnswerType.NAME, '15 July 1916', founded) ?? '', /^"15 July 1916" is a time/);
    assert.match(typeMisfit(AnswerType.PLACE, '1916', founded) ?? '', /is a time/);
    assert.equal(typeMisfit(AnswerType.DATE, '15 July 1916', founded), null);
    assert.equal(typeMisfit(AnswerType.NAME, 'William Boeing', founded), null);
    assert.equal(typeMisfit(AnswerType.NAME, 'May', 'The prime minister was Theresa May.'), null, 'a month without a year may be a name');
  });

  it('trains a softmax regression that separates two classes, deterministically', () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ features: [i % 2 === 0 ? 1 + (i % 7) / 10 : -1 - (i % 5) / 10, (i % 3) / 3], label: i % 2 }));
    const first = trainSoftmaxRegression(rows, { classes: ['a', 'b'], features: ['x', 'noise'] });
    const second = trainSoftmaxRegression(rows, { classes: ['a', 'b'], features: ['x', 'noise'] });
    assert.deepEqual(first.model, second.model);
    assert.ok(first.loss < 0.1, `loss ${first.loss}`);
    assert.throws(() => trainSoftmaxRegression([{ features: [Number.NaN, 0], label: 0 }], { classes: ['a', 'b'], features: ['x', 'y'] }), /row 0/);
  });

  it('trains a hidden ReLU layer that separates what no linear model can (XOR), deterministically, and the addon runs it', async () => {
    const rows = Array.from({ length: 400 }, (_, i) => {
      const x = (i % 2 === 0 ? 1 : -1) * (0.5 + (i % 7) / 10);
      const y = (i % 4 < 2 ? 1 : -1) * (0.5 + (i % 5) / 10);
      return { features: [x, y], label: x * y > 0 ? 0 : 1 };
    });
    const options = { classes: ['same', 'different'], features: ['x', 'y'], hidden: 8, iterations: 600, learningRate: 0.02 };
    const linear = trainSoftmaxRegression(rows, { ...options, hidden: 0 });
    const first = trainSoftmaxRegression(rows, options);
    assert.deepEqual(first.model, trainSoftmaxRegression(rows, options).model);
    assert.ok(linear.loss > 0.6, `a linear model cannot: loss ${linear.loss}`);
    assert.ok(first.loss < 0.1, `loss ${first.loss}`);
    const p = await Classifier.fromJson(first.model).scoreBatch(rows.map((row) => row.features));
    assert.ok(
      rows.every((row, r) => (p[2 * r]! > 0.5 ? 0 : 1) === row.label),
      'the addon classifies every row as trained',
    );
  });
});
