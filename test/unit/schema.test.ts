import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { projectRoot } from '../../src/platform/paths.js';
import { printChronoqlSchema } from '../../src/api/schema.js';

it('schema/schema.graphql matches the schema generated from the code', async () => {
  const committed = (await readFile(join(projectRoot(), 'schema', 'schema.graphql'), 'utf8')).split('\n');
  const generated = (await printChronoqlSchema()).split('\n');
  const line = generated.findIndex((text, index) => text !== committed[index]);
  const differs = line >= 0 || committed.length !== generated.length;
  const at = line >= 0 ? line : Math.min(committed.length, generated.length);
  assert.ok(
    !differs,
    `schema/schema.graphql is stale from line ${at + 1} (committed: ${JSON.stringify(committed[at])}, generated: ${JSON.stringify(generated[at])}); run \`npx chronoql schema --write\``,
  );
});
