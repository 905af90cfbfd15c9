/**
 * What one operation may take while it resolves, whatever transport carried it: fields, list
 * items, characters of text and wall time. The cost estimate refuses most oversized operations
 * before they run, but it estimates from list sizes it last read; this is the bound that holds
 * regardless. Every field resolver of the schema is wrapped (withResponseBudget), so a list is
 * counted the moment it resolves, before graphql-js starts on its items: one request cannot fill
 * the heap (an anonymous sentences → article → sentences query over a 3,000-sentence article
 * once took the server down) nor resolve on past its deadline.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import {
  defaultFieldResolver,
  getNullableType,
  GraphQLError,
  GraphQLObjectType,
  isIntrospectionType,
  isListType,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';
import { RequestTimeoutError, type RequestScope } from '../platform/requestScope.js';

export interface ResponseLimits {
  /** Fields resolved plus list items returned, per operation (per event for a subscription). */
  maxResponseFields: number;
  /** Characters of text returned. */
  maxResponseTextChars: number;
  /** Wall time per operation (per event for a subscription). */
  requestBudgetMs: number;
}

export const RESPONSE_TOO_LARGE = 'RESPONSE_TOO_LARGE';
export const QUERY_TIMEOUT = 'QUERY_TIMEOUT';

/** How many fields resolve between two looks at the clock: a field costs well under a microsecond to count. */
const CLOCK_EVERY = 64;

/**
 * One operation's allowance. Once it is spent the operation is cut off: every field still to
 * resolve fails at once with the same error, and the transport sends that one error and no data.
 */
export class ResponseBudget {
  private fields = 0;
  private textChars = 0;
  private cut: GraphQLError | null = null;

  constructor(
    private readonly limits: ResponseLimits,
    /** The request scope the operation's work runs in; its deadline is the operation's. */
    readonly scope: RequestScope,
  ) {}

  /** The error the operation was cut off with, or null while it is within its budget. */
  get cutOff(): GraphQLError | null {
    return this.cut;
  }

  /** A subscription's next event starts with a fresh allowance and a fresh deadline. */
  restart(): void {
    this.fields = 0;
    this.textChars = 0;
    this.cut = null;
    this.scope.deadline = Date.now() + this.limits.requestBudgetMs;
  }

  /** Called before a field resolves: throws when this field takes the operation past its budget. */
  enter(): void {
    this.fields += 1;
    if (this.fields % CLOCK_EVERY === 0 && Date.now() > this.scope.deadline) this.cutWith(timedOut(this.limits.requestBudgetMs));
    if (this.fields > this.limits.maxResponseFields) this.cutWith(tooLarge(`${this.limits.maxResponseFields} fields and list items`));
  }

  /** Counts what a field returned: a list's items, a string's characters. Throws when that is over the budget. */
  settle<T>(result: T): T {
    if (Array.isArray(result)) {
      this.fields += result.length;
      if (this.fields > this.limits.maxResponseFields) this.cutWith(tooLarge(`${this.limits.maxResponseFields} fields and list items`));
      if (Date.now() > this.scope.deadline) this.cutWith(timedOut(this.limits.requestBudgetMs));
    } else if (typeof result === 'string') {
      this.textChars += result.length;
      if (this.textChars > this.limits.maxResponseTextChars) this.cutWith(tooLarge(`${this.limits.maxResponseTextChars} characters of text`));
    }
    return result;
  }

  /** A field failed: a request timeout anywhere below cuts off the whole operation. */
  failed(error: unknown): never {
    if (error instanceof RequestTimeoutError && !this.cut) this.cut = timedOut(this.limits.requestBudgetMs);
    throw error;
  }

  private cutWith(error: GraphQLError): never {
    this.cut = error;
    throw error;
  }
}

function tooLarge(overBy: string): GraphQLError {
  return new GraphQLError(`the response would hold more than ${overBy}; ask for fewer items or fields`, { extensions: { code: RESPONSE_TOO_LARGE } });
}

function timedOut(budgetMs: number): GraphQLError {
  return new GraphQLError(new RequestTimeoutError(budgetMs).message, { extensions: { code: QUERY_TIMEOUT } });
}

/** The HTTP status of an operation that was cut off. */
export function cutOffStatus(error: GraphQLError): number {
  return error.extensions.code === RESPONSE_TOO_LARGE ? 400 : 504;
}

interface BudgetedContext {
  budget?: ResponseBudget | null;
}

const isPromiseLike = (value: unknown): value is PromiseLike<unknown> => typeof (value as PromiseLike<unknown> | null)?.then === 'function';

/**
 * Wraps every field resolver of the schema's object types (introspection's excepted: the schema
 * bounds it) in the operation's budget, read from `context.budget`. Operations run without a
 * budget (in-process evaluations) are not limited. Synchronous fields stay synchronous.
 */
export function withResponseBudget(schema: GraphQLSchema): GraphQLSchema {
  const subscriptionType = schema.getSubscriptionType();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!(type instanceof GraphQLObjectType) || isIntrospectionType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const resolve: GraphQLFieldResolver<unknown, BudgetedContext> = field.resolve ?? defaultFieldResolver;
      const eachEvent = type === subscriptionType;
      const list = isListType(getNullableType(field.type));
      field.resolve = (source, args, context, info) => {
        const budget = context?.budget;
        if (!budget) return resolve(source, args, context, info);
        if (eachEvent) budget.restart();
        // Once cut off, nothing more is resolved. A list answers empty, so graphql-js starts on
        // none of its items; anything else fails with the cut-off error. The transport sends only
        // that error, so what the empty lists stand for is never seen.
        if (budget.cutOff) {
          if (list) return [];
          throw budget.cutOff;
        }
        budget.enter();
        let result: unknown;
        try {
          result = resolve(source, args, context, info);
        } catch (error) {
          budget.failed(error);
        }
        return isPromiseLike(result)
          ? Promise.resolve(result).then(
              (value) => (budget.cutOff && list ? [] : budget.settle(value)),
              (error: unknown) => budget.failed(error),
            )
          : budget.settle(result);
      };
    }
  }
  return schema;
}

/**
 * Over HTTP: an operation that was cut off answers with its one error and no data (the fields
 * that failed after the cut-off would each add the same error), as 400 or 504.
 */
export function cutOffResponsePlugin<TContext extends BudgetedContext>(): ApolloServerPlugin<TContext> {
  return {
    requestDidStart: async () => ({
      willSendResponse: async ({ response, contextValue }) => {
        const cut = contextValue.budget?.cutOff;
        if (!cut || response.body.kind !== 'single') return;
        response.body.singleResult.data = null;
        response.body.singleResult.errors = [cut.toJSON()];
        response.http.status = cutOffStatus(cut);
      },
    }),
  };
}
