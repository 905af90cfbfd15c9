import { GraphQLScalarType, Kind, GraphQLError } from 'graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import { parseDateInput } from '../domain/time.js';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

function parseDateOrDateTime(value: unknown): Date {
  if (typeof value === 'string' && DATE_ONLY.test(value)) {
    try {
      return parseDateInput(value, 'DateTime');
    } catch (error) {
      throw new GraphQLError((error as Error).message, { extensions: { code: 'BAD_USER_INPUT' } });
    }
  }
  return DateTimeISOResolver.parseValue(value) as Date;
}

/**
 * RFC 3339 date-times (graphql-scalars' DateTimeISO) that also accept a bare calendar date,
 * meaning midnight UTC: `asOf: "2024-08-01"` is how people ask about a day.
 */
export const DateTimeScalar = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  description: 'An instant, written as an RFC 3339 date-time ("2024-08-01T12:00:00Z") or, as input, a calendar date ("2024-08-01", midnight UTC).',
  serialize: (value) => DateTimeISOResolver.serialize(value) as string,
  parseValue: parseDateOrDateTime,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) {
      throw new GraphQLError('DateTime must be a string such as "2024-08-01"', {
        nodes: [ast],
        extensions: { code: 'BAD_USER_INPUT' },
      });
    }
    return parseDateOrDateTime(ast.value);
  },
});
