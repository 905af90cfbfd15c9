import type { FactRecord, SentenceRecord, SnapshotRecord } from '../domain/model.js';
import type { AnsweringRepository, ChangeProfile } from './answeringRepository.js';
import type { ReadRepository } from './readRepository.js';
import type { SnapshotRepository } from './snapshotRepository.js';

/** What answering reads from the graph (the FactSource of qa/ports.ts), over the repositories that hold it. */
export class AnsweringFacts {
  constructor(
    private readonly reads: ReadRepository,
    private readonly answering: AnsweringRepository,
    private readonly snapshotList: SnapshotRepository,
  ) {}

  snapshots(): Promise<SnapshotRecord[]> {
    return this.snapshotList.list();
  }

  articleTitles(): Promise<Array<{ id: string; title: string }>> {
    return this.answering.articleTitles();
  }

  attributeNames(): Promise<string[]> {
    return this.answering.attributeNames();
  }

  attributesHeldTogether(first: string, second: string): Promise<boolean> {
    return this.answering.attributesHeldTogether(first, second);
  }

  factVersions(articleIds: readonly string[]): Promise<Map<string, FactRecord[]>> {
    return this.reads.factVersions(articleIds);
  }

  previousFact(factId: string): Promise<FactRecord | null> {
    return this.answering.previousFact(factId);
  }

  changeProfiles(articleIds: readonly string[], window: { from: Date; to: Date }, asOf: Date): Promise<Map<string, ChangeProfile>> {
    return this.answering.changeProfiles(articleIds, window, asOf);
  }

  factsByIds(ids: readonly string[]): Promise<Map<string, FactRecord>> {
    return this.reads.factsByIds(ids);
  }

  sentencesByIds(ids: readonly string[]): Promise<Map<string, SentenceRecord>> {
    return this.reads.sentencesByIds(ids);
  }
}
