import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergeScopedAnswers } from '../../src/qa/scopedAnswers.js';
import { readTimeScope, scopeInstants, TimeScopeKind } from '../../src/qa/timeScope.js';
import { periodFit } from '../../src/qa/textTime.js';
import { eventClause, namedNeighbour } from '../../src/qa/question.js';

const day = (iso: string): Date => new Date(`${iso}T00:00:00.000Z`);
const ASKED = day('2025-01-15');
const SNAPSHOTS = ['2023-07-01', '2024-07-01', '2024-10-01', '2025-01-15'].map(day);

function scope(question: string, asOf = ASKED): { kind: TimeScopeKind; text: string; from: string | null; to: string | null } | null {
  const read = readTimeScope(question, asOf);
  return read && { kind: read.kind, text: read.text, from: read.from?.toISOString().slice(0, 10) ?? null, to: read.to?.toISOString().slice(0, 10) ?? null };
}

describe('time expressions in questions', () => {
  it('reads a month, a year and a day as periods', () => {
    assert.deepEqual(scope('Who was the manager of Manchester United in July 2024?'), {
      kind: 'DURING',
      text: 'in July 2024',
      from: '2024-07-01',
      to: '2024-08-01',
    });
    assert.deepEqual(scope('Who was the governor of the Reserve Bank of India in 2024?'), {
      kind: 'DURING',
      text: 'in 2024',
      from: '2024-01-01',
      to: '2025-01-01',
    });
    assert.deepEqual(scope('What happened on 4 December 2024?'), { kind: 'DURING', text: 'on 4 December 2024', from: '2024-12-04', to: '2024-12-05' });
    assert.deepEqual(scope('Who led in the 1990s?'), { kind: 'DURING', text: 'in the 1990s', from: '1990-01-01', to: '2000-01-01' });
    assert.deepEqual(scope('Who coached in the 2023–24 season?'), { kind: 'DURING', text: 'in the 2023–24 season', from: '2023-01-01', to: '2025-01-01' });
    assert.deepEqual(scope('Who was prime minister in late 2024?'), { kind: 'DURING', text: 'in late 2024', from: '2024-09-01', to: '2025-01-01' });
    assert.deepEqual(scope('Who coached in the 1999–00 season?'), { kind: 'DURING', text: 'in the 1999–00 season', from: '1999-01-01', to: '2001-01-01' });
  });

  it('reads a range without "from", and passes over a time that describes the subject', () => {
    assert.deepEqual(scope('Where was the Army Reserve Post in 1974 to 1975?'), {
      kind: 'DURING',
      text: 'in 1974 to 1975',
      from: '1974-01-01',
      to: '1976-01-01',
    });
    assert.deepEqual(scope('Which hostess took over the role on Wheel of Fortune for the period 1982 to jul 1989?'), {
      kind: 'DURING',
      text: '1982 to jul 1989',
      from: '1982-01-01',
      to: '1989-08-01',
    });
    assert.deepEqual(scope('Regarding the institute founded by Hans Elsässer in 1969, what person managed it from 1999 to 2001?'), {
      kind: 'DURING',
      text: 'from 1999 to 2001',
      from: '1999-01-01',
      to: '2002-01-01',
    });
    assert.deepEqual(scope('What job did the chemist born February 13, 1859 hold from 1881 to 1882?')?.from, '1881-01-01');
    assert.deepEqual(scope('From 2004 to 2006, who owned the bank founded in 1991?')?.text, 'From 2004 to 2006');
    assert.deepEqual(scope('Who was born in 1950?')?.text, 'in 1950', 'a describing time alone is still the scope');
  });

  it('reads TimeQA-style ranges: between … and …, from … to …', () => {
    assert.deepEqual(scope('Who was president between Dec 1933 and Dec 1935?'), {
      kind: 'DURING',
      text: 'between Dec 1933 and Dec 1935',
      from: '1933-12-01',
      to: '1936-01-01',
    });
    assert.deepEqual(scope('Which team did he play for between 1990 and 1995?'), {
      kind: 'DURING',
      text: 'between 1990 and 1995',
      from: '1990-01-01',
      to: '1996-01-01',
    });
    assert.deepEqual(scope('Who was PM from 2019 to 2022?'), { kind: 'DURING', text: 'from 2019 to 2022', from: '2019-01-01', to: '2023-01-01' });
    assert.deepEqual(
      scope('What type of planes were flown by Escadron de Chasse 1/2 Cigognes from 1939 to 1944?'),
      { kind: 'DURING', text: 'from 1939 to 1944', from: '1939-01-01', to: '1945-01-01' },
      'a number across a slash with no year is part of a name',
    );
    assert.deepEqual(scope('What television shows did David Hasselhoff act in between the years 1975 and 1982?'), {
      kind: 'DURING',
      text: 'between the years 1975 and 1982',
      from: '1975-01-01',
      to: '1983-01-01',
    });
    assert.deepEqual(
      scope('What was the company now known as the Marriott Corporation called from Nov 1964 to Nov 1967?'),
      { kind: 'DURING', text: 'from Nov 1964 to Nov 1967', from: '1964-11-01', to: '1967-12-01' },
      '"now" describes the company; the stated range is the scope',
    );
  });

  it('fits a stated time that opens or closes the asked period, but not where only the horizon ends an open claim', () => {
    const utc = (iso: string) => new Date(`${iso}T00:00:00.000Z`);
    const period = (from: string | null, to: string | null) => ({ from: from ? utc(from) : null, to: to ? utc(to) : null });
    const horizon = utc('2025-01-15');
    const asked = period('2012-03-01', '2014-03-01');
    assert.equal(periodFit(asked, period('2012-03-01', '2012-04-01'), horizon), 0.5, '"in March 2012 he became …"');
    assert.ok(periodFit(asked, period('2010-01-01', null), horizon) < 0.2, '"since 2010" holds throughout, but mostly outside');
    const year2024 = period('2024-01-01', '2025-01-01');
    assert.ok(
      periodFit(year2024, period('2024-12-11', null), horizon) < periodFit(year2024, period('2018-12-12', null), horizon),
      '"since 11 December 2024" ends 2024 only because the horizon is near',
    );
  });

  it('reads open scopes: before, after, since, as of', () => {
    assert.deepEqual(scope('Who led the party before 2020?'), { kind: 'BEFORE', text: 'before 2020', from: null, to: '2020-01-01' });
    assert.deepEqual(scope('Who won after the 2022 election year?'), { kind: 'AFTER', text: 'after the 2022 election year', from: '2023-01-01', to: null });
    assert.deepEqual(scope('Who has been prime minister since 2020?'), { kind: 'SINCE', text: 'since 2020', from: '2020-01-01', to: null });
    assert.deepEqual(scope('Who was champion as of last year?'), { kind: 'AT', text: 'as of last year', from: '2024-12-31', to: '2025-01-01' });
    assert.deepEqual(scope('Who was PM at the end of 2023?'), { kind: 'AT', text: 'at the end of 2023', from: '2023-12-31', to: '2024-01-01' });
  });

  it('reads relative expressions against asOf', () => {
    assert.deepEqual(scope('Who was prime minister last month?'), { kind: 'DURING', text: 'last month', from: '2024-12-01', to: '2025-01-01' });
    assert.deepEqual(scope('Who was the CEO two years ago?'), { kind: 'AT', text: 'two years ago', from: '2023-01-15', to: '2023-01-15' });
    assert.deepEqual(scope('Who was the coach in May?'), { kind: 'DURING', text: 'in May', from: '2024-05-01', to: '2024-06-01' }, 'the last May up to asOf');
  });

  it('reads a week named against asOf as seven days, not as one day of it or as nothing', () => {
    // 2025-01-15 is a Wednesday: its calendar week starts on Monday the 13th.
    assert.deepEqual(scope('How many candidates took part in the debate this week?'), {
      kind: 'DURING',
      text: 'this week',
      from: '2025-01-13',
      to: '2025-01-20',
    });
    assert.deepEqual(scope('Who resigned last week?'), { kind: 'DURING', text: 'last week', from: '2025-01-06', to: '2025-01-13' });
    assert.deepEqual(scope('Who won the most votes in the past week?'), { kind: 'DURING', text: 'in the past week', from: '2025-01-09', to: '2025-01-16' });
    assert.deepEqual(
      scope('Who plays next week?', day('2025-01-19')),
      { kind: 'DURING', text: 'next week', from: '2025-01-20', to: '2025-01-27' },
      'from a Sunday',
    );
    assert.equal(scope('How many people use ChatGPT every week?'), null);
    assert.deepEqual(
      scope('Who topped the charts in the last week of December 2023?'),
      { kind: 'DURING', text: 'December 2023', from: '2023-12-01', to: '2024-01-01' },
      'a week of a named month is no week before asOf',
    );
  });

  it('reads "currently", "now" and "the previous"', () => {
    assert.equal(scope('Who is currently the CEO of Intel?')?.kind, TimeScopeKind.CURRENT);
    assert.equal(scope('Who is the CEO of Intel now?')?.kind, TimeScopeKind.CURRENT);
    assert.deepEqual(scope('Who was the previous prime minister of France?'), { kind: 'PREVIOUS', text: 'previous', from: null, to: '2025-01-15' });
    assert.deepEqual(scope("Who was Poland's prime minister before Donald Tusk?"), {
      kind: 'PREVIOUS',
      text: 'before Donald Tusk',
      from: null,
      to: '2025-01-15',
    });
    assert.equal(scope('Who was prime minister before June 2024?')?.kind, TimeScopeKind.BEFORE, 'a month is a time, not a predecessor');
    assert.deepEqual(namedNeighbour('Who took over at Liverpool after Jürgen Klopp?'), { side: 'after', name: 'Jürgen Klopp', text: 'after Jürgen Klopp' });
    assert.deepEqual(namedNeighbour('Who succeeded Rishi Sunak?'), { side: 'after', name: 'Rishi Sunak', text: 'succeeded Rishi Sunak' });
    assert.equal(namedNeighbour("Who was Poland's prime minister before Donald Tusk?")?.side, 'before');
    assert.equal(namedNeighbour('Who was prime minister after June 2024?'), null, 'a month is a time');
    assert.equal(namedNeighbour('After serving as governor, what office did he take?'), null);
    assert.equal(namedNeighbour('Who led Poland after Jan 2024?'), null, 'a month, however short, is a time');
    assert.equal(namedNeighbour('Who won the league after Euro 2020?'), null, 'nor a shorter part of a name before a number');
    assert.deepEqual(namedNeighbour('Before Donald Tusk, who led Poland?'), { side: 'before', name: 'Donald Tusk', text: 'Before Donald Tusk' });
    assert.deepEqual(namedNeighbour("Who managed Liverpool following Klopp's exit?"), { side: 'after', name: 'Klopp', text: 'following Klopp' });
    assert.equal(scope('Who preceded Michel Barnier?')?.text, 'preceded Michel Barnier');
    assert.deepEqual(scope('Who took over at Liverpool after Jürgen Klopp?'), { kind: 'NEXT', text: 'after Jürgen Klopp', from: null, to: '2025-01-15' });
  });

  it('reads "when <event>" as the time of that event, for the text to give; "When did …?" asks for a time', () => {
    assert.deepEqual(scope('Who was the prime minister of France when Paris hosted the Olympics?'), {
      kind: 'WHEN',
      text: 'when Paris hosted the Olympics',
      from: null,
      to: null,
    });
    assert.deepEqual(eventClause('Who coached BATE when they won their first domestic cup, and who owned it?'), {
      clause: 'they won their first domestic cup',
      text: 'when they won their first domestic cup',
    });
    assert.equal(eventClause('When did Paris host the Olympics?'), null);
    assert.equal(eventClause('Since when has Macron been president?'), null);
    assert.equal(eventClause('Who led the club when?'), null);
    for (const asksForATime of ['And when did he leave Liverpool?', 'Tell me when the Berlin Wall fell', 'So when did it open?'])
      assert.equal(scope(asksForATime), null, asksForATime);
    assert.equal(
      scope('Which team did Gary Mills manage when Alfreton Town won the league in 2006?')?.kind,
      'DURING',
      'a time the question states comes first',
    );
    assert.deepEqual(scopeInstants(readTimeScope('Who led when the dam broke?', ASKED), ASKED, SNAPSHOTS), {
      instants: [],
      main: 'last',
      note: 'asks about the time of "when the dam broke", which nothing the store knew as of 2025-01-15 dates',
    });
  });

  it('reads "the first" and "last" as the earliest and the latest value, not as a unit of time or a match', () => {
    assert.deepEqual(scope('Who was the first prime minister of the United Kingdom?'), { kind: 'FIRST', text: 'the first', from: null, to: '2025-01-15' });
    assert.deepEqual(scope('Which club did Gary Mills manage first?'), { kind: 'FIRST', text: 'first', from: null, to: '2025-01-15' });
    assert.deepEqual(scope("Who was Liverpool's last manager?"), { kind: 'LAST', text: 'last', from: null, to: '2025-01-15' });
    for (const question of [
      'When was Everest first climbed?',
      'What is his last name?',
      'Who won for the first time?',
      'Who scored in the last round?',
      'Who finished first?',
      'Which team came last?',
      'Who scored the first goal?',
    ])
      assert.equal(scope(question), null, question);
    assert.equal(scope('Who was prime minister last year?')?.kind, 'DURING', 'a time the question states comes first');
    assert.equal(scope('Who was the last head coach before Arne Slot?')?.kind, 'PREVIOUS', 'and a named neighbour');
  });

  it('leaves questions without a time, and years that name an event, alone', () => {
    assert.equal(scope('Who is the prime minister of France?'), null);
    assert.equal(scope('Who won the 2022 World Cup?'), null);
    assert.equal(scope('Where will the 2030 Winter Olympics be held?'), null);
    assert.equal(scope('What is the population of the 10 largest cities?'), null);
    assert.equal(scope(''), null);
  });

  it('answers a scope at the instants where versions can change in it, up to asOf', () => {
    const at = (question: string): string[] =>
      scopeInstants(readTimeScope(question, ASKED), ASKED, SNAPSHOTS).instants.map((d) => d.toISOString().slice(0, 10));
    assert.deepEqual(at('Who was the manager of Manchester United in July 2024?'), ['2024-07-01']);
    assert.deepEqual(at('Who was the governor of the Reserve Bank of India in 2024?'), ['2024-01-01', '2024-07-01', '2024-10-01']);
    assert.deepEqual(at('Who is the prime minister of France?'), ['2025-01-15']);
    assert.deepEqual(at('Who was PM at the end of 2023?'), ['2023-12-31']);
    const early = scopeInstants(readTimeScope('Who was PM in 1990?', ASKED), ASKED, SNAPSHOTS);
    assert.deepEqual(early.instants, []);
    assert.match(early.note!, /before the first snapshot \(2023-07-01\)/);
    const future = scopeInstants(readTimeScope('Who will be PM next year?', ASKED), ASKED, SNAPSHOTS);
    assert.deepEqual(future.instants, [ASKED]);
    assert.match(future.note!, /after asOf 2025-01-15: answered as of asOf/);
  });

  it("merges a period's answers: the longest-held first, the others with when they held", () => {
    const answer = (instant: string, guess: string, adopted = true) => ({
      instant: day(instant),
      guess,
      adopted,
      certainty: { reliable: 0.9, misleading: 0.05, uncertain: 0.05 },
      evidence: null,
    });
    const merged = mergeScopedAnswers(
      [answer('2024-01-01', 'Das'), answer('2024-07-01', 'Das'), answer('2024-12-11', 'Malhotra')],
      day('2025-01-01'),
      'longest',
    );
    assert.equal(merged.main, 0);
    assert.deepEqual(
      merged.others.map((other) => [other.text, other.from.toISOString().slice(0, 10), other.to.toISOString().slice(0, 10)]),
      [['Malhotra', '2024-12-11', '2025-01-01']],
    );
    assert.equal(mergeScopedAnswers([answer('2023-01-01', 'Ann'), answer('2024-01-01', 'Bob')], day('2025-01-01'), 'first').main, 0);
    assert.equal(mergeScopedAnswers([answer('2023-01-01', 'Ann'), answer('2024-01-01', 'Bob')], day('2025-01-01'), 'last').main, 1);
    // An adopted answer is preferred to a longer-held one that was not adopted.
    assert.equal(mergeScopedAnswers([answer('2023-01-01', 'Ann', false), answer('2024-12-01', 'Bob')], day('2025-01-01'), 'longest').main, 1);
  });
});
