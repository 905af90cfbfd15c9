import type { AttributeVocabulary } from './factLinker.js';
import type { FactSource } from './ports.js';
import { roleWordsOf, SubjectIndex } from './subjects.js';

/**
 * The names questions are linked against: the store's article titles, as a SubjectIndex, and the
 * attribute names of its facts with their role words. Read once per store version (a snapshot
 * added, or completed).
 */
export class StoreNames implements AttributeVocabulary {
  private current: { version: string; index: SubjectIndex; attributes: string[]; roleWords: Set<string>; together: Map<string, boolean> } | null = null;

  constructor(private readonly facts: Pick<FactSource, 'articleTitles' | 'attributeNames' | 'attributesHeldTogether'>) {}

  /** The titles read last; undefined before the first read. */
  get index(): SubjectIndex | undefined {
    return this.current?.index;
  }

  names(): string[] {
    return this.current?.attributes ?? [];
  }

  async heldTogether(first: string, second: string): Promise<boolean> {
    const key = JSON.stringify([first, second].sort());
    const known = this.current?.together.get(key);
    if (known !== undefined) return known;
    const together = await this.facts.attributesHeldTogether(first, second);
    this.current?.together.set(key, together);
    return together;
  }

  /**
   * The titles of the store at `version` and the heads of its attribute names (subjects.ts
   * roleWordsOf), read again when it differs from the last one read; one version's both, though
   * another request reads a newer one meanwhile.
   */
  async at(version: string): Promise<{ index: SubjectIndex; roleWords: ReadonlySet<string> }> {
    if (this.current?.version !== version) {
      const [titles, attributes] = await Promise.all([this.facts.articleTitles(), this.facts.attributeNames()]);
      this.current = { version, index: new SubjectIndex(titles), attributes, roleWords: roleWordsOf(attributes), together: new Map() };
    }
    return { index: this.current.index, roleWords: this.current.roleWords };
  }
}
