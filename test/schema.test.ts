import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { projectRoot } from '../src/paths.js';
import { printChronoqlSchema } from '../src/schema/index.js';

it('schema/schema.graphql matches the schema generated from the code (run `npx chronoql schema --write`)', async () => {
  const committed = await readFile(join(projectRoot(), 'schema', 'schema.graphql'), 'utf8');
  assert.equal(committed, await printChronoqlSchema());
});
