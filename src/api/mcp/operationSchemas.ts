/**
 * The JSON Schemas of a GraphQL operation, read from the API's own schema: what its variables
 * take (an MCP tool's input) and what its selection returns (the tool's structured result). The
 * GraphQL schema stays the one definition of every argument and field, with its descriptions;
 * MCP clients see the same types as JSON Schema.
 */
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  Kind,
  typeFromAST,
  valueFromASTUntyped,
  type FieldNode,
  type GraphQLInputType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

export type JsonSchema = Record<string, unknown>;

const SCALAR_TYPES: Record<string, string> = { String: 'string', ID: 'string', Int: 'integer', Float: 'number', Boolean: 'boolean', DateTime: 'string' };

function scalarSchema(type: GraphQLScalarType, direction: 'input' | 'output'): JsonSchema {
  const jsonType = SCALAR_TYPES[type.name];
  if (!jsonType) throw new Error(`no JSON Schema for the GraphQL scalar ${type.name}`);
  // As input a DateTime may also be a bare date, which JSON Schema's date-time format refuses: its description says what it takes.
  if (type.name === 'DateTime') return direction === 'output' ? { type: jsonType, format: 'date-time' } : { type: jsonType, description: type.description };
  return { type: jsonType };
}

const described = (schema: JsonSchema, description: string | null | undefined): JsonSchema => (description ? { ...schema, description } : schema);

function inputSchema(type: GraphQLInputType): JsonSchema {
  if (type instanceof GraphQLNonNull) return inputSchema(type.ofType);
  if (type instanceof GraphQLList) return { type: 'array', items: inputSchema(type.ofType) };
  if (type instanceof GraphQLEnumType) return described({ type: 'string', enum: type.getValues().map((value) => value.name) }, type.description);
  if (type instanceof GraphQLInputObjectType) {
    const fields = Object.values(type.getFields());
    return described(
      {
        type: 'object',
        properties: Object.fromEntries(
          fields.map((field) => [
            field.name,
            described({ ...inputSchema(field.type), ...(field.defaultValue === undefined ? {} : { default: field.defaultValue }) }, field.description),
          ]),
        ),
        required: fields.filter((field) => field.type instanceof GraphQLNonNull && field.defaultValue === undefined).map((field) => field.name),
        additionalProperties: false,
      },
      type.description,
    );
  }
  return scalarSchema(type, 'input');
}

/**
 * The input of an operation: one property per variable, described by `descriptions` (every
 * variable but those in `derived`, which the caller does not give, must have one).
 */
export function variablesSchema(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  descriptions: Readonly<Record<string, string>>,
  derived: readonly string[] = [],
): JsonSchema {
  const given = (operation.variableDefinitions ?? []).filter((definition) => !derived.includes(definition.variable.name.value));
  const properties: Record<string, JsonSchema> = {};
  for (const definition of given) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (!type) throw new Error(`variable $${name} has a type the schema does not have`);
    if (!descriptions[name]) throw new Error(`variable $${name} has no description`);
    const defaultValue = definition.defaultValue ? { default: valueFromASTUntyped(definition.defaultValue) } : {};
    properties[name] = { ...inputSchema(type), ...defaultValue, description: descriptions[name] };
  }
  const required = given.filter((definition) => definition.type.kind === Kind.NON_NULL_TYPE && !definition.defaultValue).map((d) => d.variable.name.value);
  return { type: 'object', properties, required, additionalProperties: false };
}

/** A field under @include or @skip may be left out of the result. */
const conditional = (field: FieldNode): boolean => (field.directives ?? []).some((directive) => ['include', 'skip'].includes(directive.name.value));

/** Nullable as `anyOf` branches of one type each: clients that map tool schemas onto a one-type dialect (Gemini's) refuse a list of types. */
const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });

function outputSchema(type: GraphQLOutputType, field: FieldNode): JsonSchema {
  if (type instanceof GraphQLNonNull) {
    const inner = type.ofType;
    if (inner instanceof GraphQLList) return { type: 'array', items: outputSchema(inner.ofType, field) };
    if (inner instanceof GraphQLObjectType) return selectionSchema(inner, field.selectionSet);
    if (inner instanceof GraphQLEnumType) return { type: 'string', enum: inner.getValues().map((value) => value.name) };
    if (inner instanceof GraphQLScalarType) return scalarSchema(inner, 'output');
    throw new Error(`tool operations select no ${inner.toString()}`);
  }
  return nullable(outputSchema(new GraphQLNonNull(type), field));
}

/** The result of a selection on `parent`: one property per field (its alias when it has one), with the schema's descriptions. */
export function selectionSchema(parent: GraphQLObjectType, selectionSet: SelectionSetNode | undefined): JsonSchema {
  if (!selectionSet) throw new Error(`a selection of ${parent.name} needs fields`);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const selection of selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) throw new Error('tool operations select fields, not fragments');
    const definition = parent.getFields()[selection.name.value];
    if (!definition) throw new Error(`${parent.name} has no field ${selection.name.value}`);
    const name = selection.alias?.value ?? selection.name.value;
    properties[name] = described(outputSchema(definition.type, selection), definition.description);
    if (!conditional(selection)) required.push(name);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}
