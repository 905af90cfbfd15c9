/**
 * The first stage of `ask`: each request checked, the time it names read and turned into the
 * instants to answer at, the articles and the fact it asks about linked, the conversation's
 * evidence loaded, and the retrieval decision made at each instant. What comes out is a plan per
 * instant, read-only: the later stages add evidence and candidates beside it.
 */
import type { ChangeProfile } from '../graph/answeringRepository.js';
import type { EventTime, FactRecord } from '../domain/model.js';
import { isoDay, isValidAt } from '../domain/time.js';
import { SearchUnit } from '../retrieval/retriever.js';
import { ASK_LIMITS, AskInputError, checkRequest } from './askInput.js';
import { analyseInConversation, continuation, conversationSummary } from './conversation.js';
import { decideRetrieval, sameSubjectAndAttribute } from './decision.js';
import { describedBy, type DescribedSubject } from './describedSubject.js';
import { unlinkedOwners } from './unlinkedOwners.js';
import { documentEvidence, factEvidence } from './evidence.js';
import { FactLinker, formerValues, neighbourOfNamed, valueOfNamedYear, type FactMatch } from './factLinker.js';
import type { Generator } from './generators/types.js';
import type { AnsweringPorts } from './ports.js';
import { analyseQuestion, namedNeighbour, questionNames, type QuestionAnalysis } from './question.js';
import { namesAnAttribute } from './roleAcronyms.js';
import { namedBeyondRoles, namesBesideTitles, respell, type LinkedSubject } from './subjects.js';
import { StoreNames } from './storeNames.js';
import { anchorsInText, type PlanAnchor } from './textAnchors.js';
import type { Period } from './textTime.js';
import { readTimeScope, scopeInstants, TimeScopeKind, type ScopeInstants, type TimeScope } from './timeScope.js';
import { DecisionAction, EvidenceKind, RetrievalMode, type AskRequest, type Decision, type Evidence, type Turn } from './types.js';

/** One question to answer at one instant: everything known before any evidence is gathered. */
export interface InstantPlan {
  readonly question: QuestionAnalysis;
  /** The question's sentence embedding (for linking it to facts). */
  readonly vector: Float32Array;
  readonly names: readonly string[];
  /** The question's names that no passage of the store mentions ("nvidia" in a store without Nvidia). */
  readonly unheardOf: readonly string[];
  /** The question's names without an article that it asks something of ("Trump's"): an answer's words must name them. */
  readonly unlinkedOwners: readonly string[];
  readonly query: string;
  readonly asOf: Date;
  readonly mode: RetrievalMode;
  readonly k: number;
  readonly generator: Generator;
  readonly subjects: readonly LinkedSubject[];
  readonly profiles: ReadonlyMap<string, ChangeProfile>;
  /** The asked fact valid at asOf (or its previous version, for "before that"). */
  readonly factMatch: FactMatch | null;
  readonly formerValues: readonly string[];
  /** A past year the question names as an event ("the 2023 final"), with the asked fact's other value at its end. */
  readonly namedYearValue: { year: number; value: string } | null;
  /** The fact by which the question names what it asks about ("the ChatGPT developer": OpenAI): its value is never the answer. */
  readonly described: DescribedSubject | null;
  readonly memoryFact: FactRecord | null;
  readonly conversationEvidence: readonly Evidence[];
  readonly decision: Decision;
  /**
   * The period the question asks about, on the plan that reads it in the text the store knew as
   * of asOf (event time); null on the plans answered at instants of the snapshot clock.
   */
  readonly period: Period | null;
  /** On a text plan whose period another event or a named value gives: where the text dates it. */
  readonly anchor: PlanAnchor | null;
  /** On a text plan asking for the first or the last value ("the first prime minister"): which; the earliest or latest reading answers. */
  readonly ordinal: 'first' | 'last' | null;
}

/** One request: its time scope and a plan for each of the scope's instants. */
export interface AskedQuestion {
  readonly question: string;
  readonly asOf: Date;
  readonly scope: TimeScope | null;
  readonly instants: ScopeInstants;
  /** One plan per instant of the snapshot clock. */
  readonly plans: readonly InstantPlan[];
  /** For a question about a period, the plan that reads the period in the text; its answer, when the text has one, comes first. */
  readonly textPlan: InstantPlan | null;
}

/** The scopes a text is read for as the question words them: a period or an instant, not "now" or "the previous one" (an event's time or a named value's neighbour is read through its anchor). */
const READ_IN_TEXT = new Set([TimeScopeKind.AT, TimeScopeKind.DURING, TimeScopeKind.BEFORE, TimeScopeKind.AFTER, TimeScopeKind.SINCE]);

/** A question about who won something in a period ("Who won the women's singles at Wimbledon in 2024?"). */
const WINNING = /\b(?:won|wins?|beat|defeated|crowned)\b/i;

/** An attribute whose value is the first of its kind: "First holder", "Founder", "Inaugural winner". */
const FIRST_OF_ITS_KIND = /\b(?:first|founders?|founding|inaugural|original)\b/i;

/** The question with some of its words taken out (its time scope: what the text is searched for). */
function without(question: string, words: string): string {
  return question
    .replace(words, ' ')
    .replace(/\s+([,?.!])/g, '$1')
    .replace(/\s{2,}/g, ' ')
    .trim();
}

const bounds = ({ from, to }: Period): string => `[${from ? isoDay(from) : '…'}, ${to ? isoDay(to) : '…'})`;

/** Where the text dates an anchor: `the text states "in July 2024" for it in Paris`. */
const datedIn = ({ reading }: PlanAnchor): string => `the text states "${reading.time.text}" for it in ${reading.articleId}`;

function scopeCue(scope: TimeScope, plan: ScopeInstants, anchor: PlanAnchor | null): string {
  if (plan.note) return plan.note;
  if (anchor?.side === 'during') {
    return `the question asks about the time of "${anchor.words}": ${datedIn(anchor)} (${bounds(anchor.period)}); answered as of ${plan.instants.map(isoDay).join(', ')}`;
  }
  if (scope.kind === TimeScopeKind.CURRENT) return `time expression "${scope.text}": as of asOf`;
  if (scope.kind === TimeScopeKind.PREVIOUS) return `time expression "${scope.text}": asks for an earlier value`;
  if (scope.kind === TimeScopeKind.NEXT) return `time expression "${scope.text}": asks for a later value`;
  const at = plan.instants.map(isoDay).join(', ');
  return `time expression "${scope.text}" (${scope.kind}): answered as of ${at}${plan.instants.length > 1 ? ` (${plan.main === 'longest' ? 'the answer that held longest' : `the ${plan.main} answer`} first)` : ''}`;
}

/** Which time the text plan reads, and from where: the question's own words, or the text's date of what it relates the answer to. */
function textCue(scope: TimeScope, period: Period, anchor: PlanAnchor | null, asOf: Date): string {
  const knowledge = `read in the text the store knew as of ${isoDay(asOf)}`;
  if (scope.kind === TimeScopeKind.FIRST || scope.kind === TimeScopeKind.LAST) {
    const [which, time] = scope.kind === TimeScopeKind.FIRST ? ['first', 'earliest'] : ['last', 'latest'];
    return `the question asks for the ${which} value ("${scope.text}"): ${knowledge}, the ${time} time it states first`;
  }
  if (!anchor)
    return `the question asks about "${scope.text}" (${bounds(period)}, when it held in the world): ${knowledge}, where it states a time in that period`;
  if (anchor.side === 'during')
    return `the question asks about the time of "${anchor.words}": ${datedIn(anchor)} (${bounds(period)}); ${knowledge}, where it states a time in that period`;
  return `the question asks for the value ${anchor.side} "${anchor.words}": ${datedIn(anchor)}; ${knowledge}, in ${bounds(period)}, the nearest first`;
}

/** The period a question's text plan reads: what its anchor gives, all time for "the first" or "last", or its own scope's; null when the text is not read for it. */
function periodReadInText(scope: TimeScope | null, anchor: PlanAnchor | null): Period | null {
  if (anchor) return anchor.period;
  if (scope?.kind === TimeScopeKind.FIRST || scope?.kind === TimeScopeKind.LAST) return { from: null, to: null };
  return scope && READ_IN_TEXT.has(scope.kind) ? { from: scope.from, to: scope.to } : null;
}

/**
 * The period a dated anchor gives: its own time, or from its start on, or up to its end (what the
 * reading dating it says may be the answer: "Arne Slot replaced Jürgen Klopp in June 2024").
 */
function anchorPeriod(side: PlanAnchor['side'], { from, to }: EventTime): Period {
  if (side === 'during') return { from, to };
  return side === 'after' ? { from, to: null } : { from: null, to };
}

/** The retrieval decision once the conversation and the requested mode are taken into account. */
function settledDecision(
  decision: Decision,
  mode: RetrievalMode,
  conversation: { turns: readonly Turn[]; summary: string; covered: boolean; cues: readonly string[] },
): Decision {
  let settled = decision;
  if (conversation.turns.length > 0) {
    settled = conversation.covered
      ? { ...settled, action: DecisionAction.CONTINUE_WITH_EVIDENCE, cues: [...conversation.cues, ...settled.cues] }
      : {
          ...settled,
          action: DecisionAction.RETRIEVE,
          cues: [...conversation.cues, `retrieving with the conversation summary "${conversation.summary}"`, ...settled.cues],
        };
  }
  if (mode === RetrievalMode.NEVER) return { ...settled, action: DecisionAction.NO_RETRIEVE, cues: ['retrieval mode NEVER', ...settled.cues] };
  if (mode !== RetrievalMode.ADAPTIVE) return { ...settled, action: DecisionAction.RETRIEVE, cues: [`retrieval mode ${mode}`, ...settled.cues] };
  return settled;
}

/**
 * Plans questions. It keeps the linker's cache, the index of article titles and the store's
 * attribute names (read again when a snapshot is added) between calls; each plan it returns is its own.
 */
export class QuestionPlanner {
  private readonly linker: FactLinker;
  private readonly names: StoreNames;

  constructor(private readonly ports: AnsweringPorts) {
    this.names = new StoreNames(ports.facts);
    this.linker = new FactLinker((texts) => ports.encoder.embedQueries(texts), ports.encoder.dimension, this.names);
  }

  /**
   * Every request checked and planned; `where` names the argument in errors ("questions[3].k").
   * A question that names its subject by a fact whose value is an article ("Who chairs the board
   * at the ChatGPT developer?": OpenAI) is planned once more, as asked of that article.
   */
  async plan(requests: readonly AskRequest[], defaultAsOf: Date, where: string): Promise<AskedQuestion[]> {
    const asked = await this.planOnce(requests, defaultAsOf, where);
    const titles = this.names.index;
    const hops = asked.flatMap((question, index) => {
      const described = question.plans.find((plan) => plan.described)?.described;
      if (!described || !titles?.link(described.value).some((subject) => subject.coverage === 1)) return [];
      return [{ index, described, request: { ...requests[index]!, question: described.askedOf } }];
    });
    if (hops.length === 0) return asked;
    const replanned = await this.planOnce(
      hops.map(({ request }) => request),
      defaultAsOf,
      where,
    );
    hops.forEach(({ index, described }, n) => {
      const cue = `the question names ${described.value} as "${described.phrase}": asked of ${described.value}`;
      // Still never its own answer: "OpenAI" does not chair OpenAI's board.
      const withCue = (plan: InstantPlan): InstantPlan => ({ ...plan, described, decision: { ...plan.decision, cues: [cue, ...plan.decision.cues] } });
      const hop = replanned[n]!;
      asked[index] = { ...hop, question: asked[index]!.question, plans: hop.plans.map(withCue), textPlan: hop.textPlan && withCue(hop.textPlan) };
    });
    return asked;
  }

  private async planOnce(requests: readonly AskRequest[], defaultAsOf: Date, where: string): Promise<AskedQuestion[]> {
    const { facts, search, encoder, generators } = this.ports;
    if (requests.length > ASK_LIMITS.maxBatch) throw new AskInputError(where, `at most ${ASK_LIMITS.maxBatch} questions per batch, got ${requests.length}`);
    const snapshots = await facts.snapshots();
    const first = snapshots[0];
    if (!first) throw new AskInputError(where, 'nothing has been ingested yet: load a snapshot first');
    const cutoff = this.ports.cutoff ?? first.takenAt;
    const latest = snapshots[snapshots.length - 1]!;
    const snapshotDates = snapshots.map((snapshot) => snapshot.takenAt);
    // Keyed by status too: an article list read while a snapshot is still being ingested is partial.
    const { index: subjects, roleWords } = await this.names.at(`${latest.id}:${latest.status}`);
    const checked = requests.map((request, index) => {
      const at = requests.length === 1 && where === 'ask' ? '' : `${where}[${index}].`;
      let generator: Generator;
      try {
        generator = generators.get(request.generator);
      } catch (error) {
        throw new AskInputError(`${at}generator`, (error as Error).message);
      }
      return { ...checkRequest(request, defaultAsOf, first.takenAt, at), generator };
    });
    // Read as the store writes its names: a typo in a title word would cost the fact, the search and the
    // reader their match. A word the store's text uses ("Dutch", "armed") is no typo, whatever title it is near.
    const typos = checked.map(({ question }) => subjects.typos(question));
    const unwritten = new Set(await search.namesNeverMentioned([...new Set(typos.flatMap((found) => [...found.keys()]))]));
    const respelled = checked.map(({ question }, index) => respell(question, new Map([...typos[index]!].filter(([written]) => unwritten.has(written)))));
    const own = respelled.map((question) => analyseQuestion(question));
    const analyses = checked.map(({ turns }, index) => analyseInConversation(own[index]!, turns));
    // A bare follow-up ("And before that?") means what the turn before it asked.
    const meanings = checked.map(({ turns }, index) =>
      turns.length > 0 && own[index]!.terms.size === 0 ? analyseQuestion(turns.at(-1)!.question) : analyses[index]!,
    );
    const vectors = await encoder.questionVectors(meanings);
    // "after Élisabeth Borne" names a value, not the attribute: the attribute is linked without it.
    const besides = own.flatMap((analysis, index) =>
      analysis.neighbour ? [{ index, analysis: analyseQuestion(without(analysis.text, analysis.neighbour.text)) }] : [],
    );
    const besideVectors = besides.length > 0 ? await encoder.questionVectors(besides.map(({ analysis }) => analysis)) : [];
    const linkedBy = own.map((analysis, index) => ({ analysis, vector: vectors[index]! }));
    besides.forEach(({ index, analysis }, i) => (linkedBy[index] = { analysis, vector: besideVectors[i]! }));
    const read = checked.map(({ question, asOf, turns }, index) => {
      const scope = readTimeScope(question, asOf);
      const summary = conversationSummary(turns);
      const linked = namedBeyondRoles(subjects.link(`${summary} ${respelled[index]}`, { acrossTypos: false }), roleWords);
      const linkedWords = new Set(linked.flatMap((subject) => subject.words));
      const names = questionNames(analyses[index]!, scope?.text);
      const unlinkedNames = [...names.filter((name) => !name.split(' ').some((word) => linkedWords.has(word))), ...namesBesideTitles(names, linked)];
      return { scope, summary, linked, names, unlinkedNames };
    });
    // A batch reads the store once per kind of read (and once per instant for change profiles), not once per question.
    const versions = await facts.factVersions([...new Set(read.flatMap((entry) => entry.linked.map((subject) => subject.articleId)))]);
    const anchors = await this.anchors(read.map(({ scope, linked }, index) => ({ scope, linked, analysis: own[index]!, ...checked[index]! })));
    const planned = read.map(({ unlinkedNames, ...entry }, index) => {
      const { asOf, turns, question } = checked[index]!;
      const unknownNames = unlinkedNames.filter((name) => !namesAnAttribute(name, entry.linked, versions));
      const anchor = anchors[index] ?? null;
      const readsText = this.ports.timesIn !== undefined && turns.length === 0;
      // An event's time, once the text gives it, is the scope the snapshot clock answers for too; where
      // the text is not read (a follow-up, no time reader), the event dates nothing and asOf answers.
      const event = entry.scope?.kind === TimeScopeKind.WHEN ? entry.scope : null;
      const scope = event && anchor ? { ...event, ...anchor.period } : event && !readsText ? null : entry.scope;
      const ordinal: InstantPlan['ordinal'] = scope?.kind === TimeScopeKind.FIRST ? 'first' : scope?.kind === TimeScopeKind.LAST ? 'last' : null;
      const textPeriod = readsText ? periodReadInText(scope, anchor) : null;
      const instants = scopeInstants(scope, asOf, snapshotDates);
      // Who won in a period is who held the title at its end, not longest: the 2024 winner is crowned in 2024.
      const won = scope?.kind === TimeScopeKind.DURING && WINNING.test(question);
      const owners = unlinkedOwners(question, unknownNames);
      return { ...entry, unknownNames, owners, scope, anchor, ordinal, textPeriod, instants: won ? { ...instants, main: 'last' as const } : instants };
    });
    const unheard = new Set(await search.namesNeverMentioned([...new Set(planned.flatMap((p) => p.unknownNames))]));
    const articlesAt = new Map<number, { at: Date; ids: Set<string> }>();
    for (const [index, { instants, linked, textPeriod }] of planned.entries()) {
      for (const at of [...instants.instants, ...(textPeriod ? [checked[index]!.asOf] : [])]) {
        const entry = articlesAt.get(at.getTime()) ?? { at, ids: new Set<string>() };
        for (const subject of linked) entry.ids.add(subject.articleId);
        articlesAt.set(at.getTime(), entry);
      }
    }
    const profilesAt = new Map<number, Map<string, ChangeProfile>>();
    for (const [time, { at, ids }] of articlesAt) {
      const window = at < cutoff ? { from: at, to: cutoff } : { from: cutoff, to: at };
      profilesAt.set(time, await facts.changeProfiles([...ids], window, at));
    }
    return Promise.all(
      checked.map(async ({ question, asOf, turns, mode, k, generator }, index): Promise<AskedQuestion> => {
        const analysis = analyses[index]!;
        const { scope, instants, summary, linked, names, unknownNames, owners, anchor, ordinal, textPeriod } = planned[index]!;
        const conversationEvidence = await this.evidenceOf(turns);
        // The turn's own words name the attribute when they can ("And the capital?"); a bare follow-up
        // ("And before that?") takes the earlier turn's too.
        const match = async (at: Date): Promise<FactMatch | null> => {
          const candidates = linked.map((subject) => ({ subject, facts: (versions.get(subject.articleId) ?? []).filter((fact) => isValidAt(fact, at)) }));
          const { analysis: linkedAnalysis, vector } = linkedBy[index]!;
          const byOwnWords = await this.linker.match({ text: linkedAnalysis.text, vector, terms: linkedAnalysis.terms }, candidates);
          return (
            byOwnWords ?? (turns.length > 0 ? this.linker.match({ text: analysis.text, vector: vectors[index]!, terms: analysis.terms }, candidates) : null)
          );
        };
        const memoryFact = (await match(cutoff))?.fact ?? null;
        const plans = await Promise.all(
          instants.instants.map(async (instant): Promise<InstantPlan> => {
            const profiles = profilesAt.get(instant.getTime())!;
            const matched = await match(instant);
            // The cutoff's match is what the generator remembers of *this* question only when it is the same fact:
            // an article new since the cutoff ("Real Sociedad") matched another subject's fact then.
            const remembered = memoryFact && (!matched || sameSubjectAndAttribute(matched.fact, memoryFact)) ? memoryFact : null;
            let factMatch = matched;
            const beside =
              factMatch && analysis.neighbour
                ? neighbourOfNamed(versions.get(factMatch.fact.subject) ?? [], factMatch.fact, analysis.neighbour, instant)
                : undefined;
            if (factMatch && beside !== undefined) {
              factMatch = beside ? { ...factMatch, fact: beside } : null;
            } else if (analysis.neighbour) {
              // Today's value, or the one before it, is no answer to "after X" or "before X" when no version names X.
              factMatch = null;
            } else if (factMatch && scope?.kind === TimeScopeKind.FIRST && !FIRST_OF_ITS_KIND.test(factMatch.fact.attribute)) {
              // Nor to "the first prime minister": the subject's one attribute that is the first of its kind ("First holder") may be.
              const first = (versions.get(factMatch.fact.subject) ?? []).filter((fact) => FIRST_OF_ITS_KIND.test(fact.attribute) && isValidAt(fact, instant));
              factMatch = first.length === 1 ? { ...factMatch, fact: first[0]! } : null;
            } else if (factMatch && analysis.asksForEarlier) {
              const previous = await facts.previousFact(factMatch.fact.id);
              factMatch = previous ? { ...factMatch, fact: previous } : null;
            }
            const described = factMatch && describedBy(question, factMatch.fact);
            if (described) factMatch = null;
            const asked = factMatch?.fact;
            let decision = decideRetrieval({
              question: analysis,
              asOf: instant,
              cutoff,
              subjects: linked,
              profiles,
              memoryFact: analysis.asksForEarlier || analysis.neighbour || scope?.kind === TimeScopeKind.FIRST ? null : remembered,
              generatorHasOwnKnowledge: generator.name !== 'extractive',
              unknownNames,
            });
            if (scope) decision = { ...decision, timeSensitive: true, cues: [scopeCue(scope, instants, anchor), ...decision.cues] };
            const continued =
              turns.length > 0
                ? continuation(analysis, conversationEvidence, asked ?? null, (fact) => factEvidence(fact, 0))
                : { covered: false, cues: [], evidence: conversationEvidence };
            return {
              question: analysis,
              vector: vectors[index]!,
              names,
              unheardOf: unknownNames.filter((name) => unheard.has(name)),
              unlinkedOwners: owners,
              // The event a question dates its answer by says when, not what: it is not searched for.
              query: turns.length > 0 ? `${summary} ${question}` : scope?.kind === TimeScopeKind.WHEN ? without(question, scope.text) : question,
              asOf: instant,
              mode,
              k,
              generator,
              subjects: linked,
              profiles,
              factMatch,
              formerValues: asked ? formerValues(versions.get(asked.subject) ?? [], asked, instant) : [],
              namedYearValue: asked && !scope ? valueOfNamedYear(versions.get(asked.subject) ?? [], asked, analysis.years, instant) : null,
              described,
              memoryFact: remembered,
              conversationEvidence: continued.evidence,
              decision: settledDecision(decision, mode, { turns, summary, covered: continued.covered, cues: continued.cues }),
              period: null,
              anchor: null,
              ordinal: null,
            };
          }),
        );
        const textPlan: InstantPlan | null =
          textPeriod && scope
            ? {
                question: analysis,
                vector: vectors[index]!,
                names,
                unheardOf: unknownNames.filter((name) => unheard.has(name)),
                unlinkedOwners: owners,
                query: without(question, scope.text),
                asOf,
                mode,
                k,
                generator,
                subjects: linked,
                profiles: profilesAt.get(asOf.getTime())!,
                factMatch: null,
                described: null,
                formerValues: [],
                namedYearValue: null,
                memoryFact: null,
                conversationEvidence: [],
                decision: {
                  action: DecisionAction.RETRIEVE,
                  timeSensitive: true,
                  cues: [textCue(scope, textPeriod, anchor, asOf)],
                  changedSince: [],
                },
                period: textPeriod,
                anchor,
                ordinal,
              }
            : null;
        return { question, asOf, scope, instants, plans, textPlan };
      }),
    );
  }

  /**
   * For each question dated by another event ("when Paris hosted the Olympics") or by a named
   * value ("after Alfreton Town"), where the text dates it (textAnchors.ts); null for the others,
   * and where nothing the store knew as of the question's asOf dates it.
   */
  private async anchors(
    questions: ReadonlyArray<{ scope: TimeScope | null; linked: readonly LinkedSubject[]; analysis: QuestionAnalysis; asOf: Date; turns: readonly Turn[] }>,
  ): Promise<Array<PlanAnchor | null>> {
    const timesIn = this.ports.timesIn;
    const asked = questions.map(({ scope, linked, analysis, asOf, turns }) => {
      if (!timesIn || turns.length > 0 || !scope) return null;
      const { event, neighbour } = analysis;
      if (scope.kind === TimeScopeKind.WHEN && event)
        return { side: 'during' as const, request: { kind: 'event' as const, words: event.clause, subjects: linked, asOf } };
      // The scope is read in the question as written, the neighbour in it respelled ("after Jurgen Klop").
      if (neighbour && (scope.kind === TimeScopeKind.NEXT || scope.kind === TimeScopeKind.PREVIOUS) && namedNeighbour(scope.text))
        return { side: neighbour.side, request: { kind: 'name' as const, words: neighbour.name, subjects: linked, asOf } };
      return null;
    });
    const wanted = asked.flatMap((entry) => (entry ? [entry] : []));
    if (!timesIn || wanted.length === 0) return questions.map(() => null);
    const found = await anchorsInText(
      wanted.map(({ request }) => request),
      this.ports,
      timesIn,
    );
    let next = 0;
    return asked.map((entry) => {
      if (!entry) return null;
      const reading = found[next++];
      return reading ? { side: entry.side, words: entry.request.words, reading, period: anchorPeriod(entry.side, reading.time) } : null;
    });
  }

  /**
   * A question may name its subject in words no title holds ("the Red Devils", "the French
   * Senate"): for a plan linked to no fact, the articles of its first round's passages are
   * candidate subjects too. Returns each plan, with the fact found that way where there is one.
   */
  async linkRetrievedSubjects(plans: ReadonlyArray<{ plan: InstantPlan; hits: readonly Evidence[] }>): Promise<InstantPlan[]> {
    const open = (plan: InstantPlan): boolean =>
      plan.factMatch === null &&
      !plan.question.asksForEarlier &&
      !plan.question.neighbour &&
      plan.mode !== RetrievalMode.ALWAYS &&
      this.ports.factCandidates !== false;
    const articleIds = [...new Set(plans.filter(({ plan }) => open(plan)).flatMap(({ hits }) => hits.map((hit) => hit.articleId)))];
    if (articleIds.length === 0) return plans.map(({ plan }) => plan);
    const versions = await this.ports.facts.factVersions(articleIds);
    const index = this.names.index!;
    return Promise.all(
      plans.map(async ({ plan, hits }) => {
        if (!open(plan)) return plan;
        const named = new Set(plan.subjects.map((subject) => subject.articleId));
        const candidates = [...new Set(hits.map((hit) => hit.articleId))]
          .filter((id) => !named.has(id))
          .flatMap((id) => {
            const subject = index.unnamed(id);
            return subject ? [{ subject, facts: (versions.get(id) ?? []).filter((fact) => isValidAt(fact, plan.asOf)) }] : [];
          });
        const factMatch = await this.linker.match({ text: plan.question.text, vector: plan.vector, terms: plan.question.terms }, candidates);
        return factMatch
          ? { ...plan, factMatch, formerValues: formerValues(versions.get(factMatch.fact.subject) ?? [], factMatch.fact, plan.asOf) }
          : { ...plan, factMatch };
      }),
    );
  }

  private async evidenceOf(turns: readonly Turn[]): Promise<Evidence[]> {
    const ids = [...new Set(turns.flatMap((turn) => turn.evidenceIds ?? []))];
    if (ids.length === 0) return [];
    const [facts, sentences, passages] = await Promise.all([
      this.ports.facts.factsByIds(ids),
      this.ports.facts.sentencesByIds(ids),
      this.ports.search.unitsByIds(SearchUnit.PASSAGE, ids),
    ]);
    return ids.flatMap((id): Evidence[] => {
      const fact = facts.get(id);
      if (fact) return [factEvidence(fact, 0)];
      const unit = sentences.get(id) ?? passages.get(id);
      if (!unit) return [];
      const kind = sentences.has(id) ? EvidenceKind.SENTENCE : EvidenceKind.PASSAGE;
      return [documentEvidence({ kind, id, articleId: unit.articleId, text: unit.text, validFrom: unit.validFrom, validTo: unit.validTo })];
    });
  }
}
