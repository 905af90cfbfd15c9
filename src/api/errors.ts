import { GraphQLError } from 'graphql';

export function badUserInput(message: string, argument?: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', ...(argument ? { argument } : {}) } });
}
