/**
 * The event times a snapshot stores with the versions it creates (text/eventTimes.ts reads them):
 * a sentence is read with the sentences of its paragraph before it, which its relative times
 * ("two years later") are placed from; a passage takes the times of the sentences it holds; a
 * fact takes the times its value states ("Real Madrid (2004–2009)", "since 2019") or, for an
 * office, the start and end of its term from the same infobox.
 */
import type { EventTime } from '../domain/model.js';
import { readEventTimes, readParagraphEventTimes } from '../text/eventTimes.js';
import { attributeKey } from './factDiff.js';
import type { PassageChunk } from './passages.js';
import type { SplitSentence } from './sentenceSplitter.js';

/** The event times of one article version's sentences and passages, each paragraph read once, when first asked for. */
export class ArticleEventTimes {
  private readonly paragraphStart: number[] = [];
  private readonly read = new Map<number, EventTime[][]>();

  constructor(private readonly sentences: readonly SplitSentence[]) {
    let start = 0;
    sentences.forEach((sentence, index) => {
      if (sentence.startsParagraph) start = index;
      this.paragraphStart.push(start);
    });
  }

  ofSentence(index: number): EventTime[] {
    const start = this.paragraphStart[index]!;
    let paragraph = this.read.get(start);
    if (!paragraph) {
      let end = start + 1;
      while (end < this.sentences.length && !this.sentences[end]!.startsParagraph) end += 1;
      paragraph = readParagraphEventTimes(this.sentences.slice(start, end).map((sentence) => sentence.text));
      this.read.set(start, paragraph);
    }
    return paragraph[index - start]!;
  }

  /** The times of the sentences a passage holds, at their offsets in the passage; a time a window cuts is left out. */
  ofPassage(chunk: PassageChunk): EventTime[] {
    return chunk.pieces.flatMap((piece) =>
      this.ofSentence(piece.sentence)
        .filter((time) => time.start >= piece.from && time.end <= piece.to)
        .map((time) => ({ ...time, start: time.start - piece.from + piece.offset, end: time.end - piece.from + piece.offset })),
    );
  }
}

/** Attributes that bound an office's term ("term_start", "term end2", "start_date"), with the office's number. */
const TERM_BOUND = /^(?:term[\s_]*)?(start|end)(?:[\s_]*date)?[\s_]*(\d*)$/;
/** Attributes that name an office ("office", "office2", "position"), with their number. */
const OFFICE = /^(?:office|title|position|post|role)[\s_]*(\d*)$/;

/**
 * The event times of each fact of an infobox, by attribute key: those its value states, or, for
 * an office whose value states none, its term from the "term_start" and "term_end" attributes of
 * the same number (an open term when it has no end). A term's times carry the attributes they
 * were read from as their words, at offsets 0..0: they are not in the office's value.
 */
export function factEventTimes(infobox: Readonly<Record<string, string>>): Map<string, EventTime[]> {
  const entries = Object.entries(infobox);
  const times = new Map(entries.map(([attribute, value]) => [attributeKey(attribute), readEventTimes(value)]));
  const terms = new Map<
    string,
    { start?: { attribute: string; value: string; time: EventTime }; end?: { attribute: string; value: string; time: EventTime } }
  >();
  for (const [attribute, value] of entries) {
    const bound = TERM_BOUND.exec(attributeKey(attribute));
    const time = times.get(attributeKey(attribute))?.[0];
    if (!bound || !time) continue;
    const term = terms.get(bound[2]!) ?? {};
    term[bound[1] as 'start' | 'end'] = { attribute, value, time };
    terms.set(bound[2]!, term);
  }
  for (const [attribute] of entries) {
    const office = OFFICE.exec(attributeKey(attribute));
    const term = office && terms.get(office[1]!);
    if (!term?.start || (term.start.time.from === null && !term.end) || times.get(attributeKey(attribute))!.length > 0) continue;
    const words = [term.start, term.end].flatMap((bound) => (bound ? [`${bound.attribute}: ${bound.value}`] : [])).join(', ');
    times.set(attributeKey(attribute), [{ from: term.start.time.from, to: term.end?.time.to ?? null, text: words, start: 0, end: 0 }]);
  }
  return times;
}
