import 'reflect-metadata';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { BenchmarkItemType as ItemType, BenchmarkKind as Kind } from '../domain/model.js';
import { DateTimeScalar } from './scalars.js';
import { connectionOf } from './types.js';

export const BenchmarkKind: { [K in Kind]: K } = { TEXT_QA: 'TEXT_QA', FACT_QA: 'FACT_QA', DIALOGUE_TURN: 'DIALOGUE_TURN', IMPORTED: 'IMPORTED' };
export const BenchmarkItemType: { [T in ItemType]: T } = { NEW: 'NEW', CHANGED: 'CHANGED', UNCHANGED: 'UNCHANGED' };

registerEnumType(BenchmarkKind, {
  name: 'BenchmarkKind',
  description: 'Where a benchmark item comes from.',
  valuesConfig: {
    TEXT_QA: { description: 'A question drafted from sentences (GrowOVER-QA).' },
    FACT_QA: { description: 'A question from an infobox fact (DynaQuest templates).' },
    DIALOGUE_TURN: { description: 'One user/expert turn of a dialogue (GrowOVER-DIALOGUE).' },
    IMPORTED: { description: 'A question of a public set, imported with its contexts.' },
  },
});
registerEnumType(BenchmarkItemType, {
  name: 'BenchmarkItemType',
  description: "An item's type at a snapshot: its evidence is new, changed, or carried over unchanged.",
});

@ObjectType({ description: 'A sentence or fact version a benchmark item rests on.' })
export class BenchmarkEvidence {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  text!: string;
}

@ObjectType({ description: 'A context an imported item came with.' })
export class BenchmarkContext {
  @Field(() => String)
  title!: string;

  @Field(() => String)
  text!: string;
}

@ObjectType({ description: 'One version of a living-benchmark item: a question with its answers, or a dialogue turn.' })
export class BenchmarkItem {
  @Field(() => ID, { description: 'The item, the same across its versions.' })
  itemId!: string;

  @Field(() => ID, { description: 'This version.' })
  id!: string;

  @Field(() => BenchmarkKind)
  kind!: Kind;

  @Field(() => BenchmarkItemType, { description: 'Its type at the snapshot in effect at asOf.' })
  type!: ItemType;

  @Field(() => String, { description: "The question, or a dialogue turn's user utterance." })
  question!: string;

  @Field(() => [String], { description: "Gold answers, or the expert's reply of a dialogue turn." })
  answers!: string[];

  @Field(() => [String], { description: 'For a CHANGED item: the answers before the change.' })
  previousAnswers!: string[];

  @Field(() => ID, { nullable: true })
  articleId!: string | null;

  @Field(() => ID, { nullable: true })
  dialogueId!: string | null;

  @Field(() => Int, { nullable: true, description: "A dialogue turn's position, from 0." })
  turn!: number | null;

  @Field(() => String, { description: 'The generator that drafted it, or the public set it came from.' })
  source!: string;

  @Field(() => [BenchmarkEvidence])
  evidence!: BenchmarkEvidence[];

  @Field(() => [BenchmarkContext])
  contexts!: BenchmarkContext[];

  @Field(() => DateTimeScalar)
  validFrom!: Date;

  @Field(() => DateTimeScalar, { nullable: true, description: 'When a later snapshot retired or remapped this version.' })
  validTo!: Date | null;

  @Field(() => DateTimeScalar)
  recordedAt!: Date;
}

@ObjectType({ description: 'A page of benchmark items ordered by item id (Relay connection).' })
export class BenchmarkItemConnection extends connectionOf(BenchmarkItem, 'BenchmarkItem') {}

@ObjectType({ description: "How many items of a kind and type a snapshot's benchmark holds (GrowOVER's Table 13)." })
export class BenchmarkSize {
  @Field(() => ID)
  snapshotId!: string;

  @Field(() => DateTimeScalar)
  takenAt!: Date;

  @Field(() => BenchmarkKind)
  kind!: Kind;

  @Field(() => BenchmarkItemType)
  type!: ItemType;

  @Field(() => Int)
  count!: number;
}
