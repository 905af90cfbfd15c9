// The one configuration: app/config.ts reads the environment once, and says which variable is wrong.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/app/config.js';

describe('configuration', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    assert.equal(config.port, 4000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.neo4j, null);
    assert.equal(config.mode, 'development');
    assert.equal(config.device, 'auto');
    assert.equal(config.requireCuda, false);
    assert.equal(config.deviceMemoryCapBytes, undefined);
    assert.equal(config.readerCacheBytes, 256 * 1024 * 1024);
    assert.equal(config.embedder.kind, 'e5-small-v2');
    assert.equal(config.labelEncoder?.kind, 'all-minilm-l6-v2');
    assert.equal(config.generator, null);
    assert.equal(config.verifier, null);
    assert.match(config.dataDir, /\.chronoql$/);
  });

  it('treats a blank variable as unset and reads the rest', () => {
    const config = loadConfig({
      PORT: ' ',
      NEO4J_URI: 'bolt://db:7687',
      NEO4J_PASSWORD: 'secret',
      CHRONOQL_LABEL_ENCODER: 'none',
      CHRONOQL_GENERATOR_BASE_URL: 'http://127.0.0.1:8080',
      CHRONOQL_GENERATOR_MODEL: 'm',
      CHRONOQL_DEVICE: 'CPU',
      CHRONOQL_DEVICE_MEMORY_MB: '2048',
      CHRONOQL_ALLOWED_ORIGINS: 'https://a.example, https://b.example',
    });
    assert.equal(config.port, 4000);
    assert.deepEqual(config.neo4j, { uri: 'bolt://db:7687', user: 'neo4j', password: 'secret', database: undefined });
    assert.equal(config.labelEncoder, null);
    assert.deepEqual(config.generator, { baseUrl: 'http://127.0.0.1:8080', model: 'm', apiKey: undefined });
    assert.equal(config.device, 'cpu');
    assert.equal(config.deviceMemoryCapBytes, 2048 * 1024 * 1024);
    assert.equal(loadConfig({ CHRONOQL_REQUIRE_CUDA: '1' }).requireCuda, true);
    assert.deepEqual(config.allowedOrigins, ['https://a.example', 'https://b.example']);
  });

  it('names every variable that is wrong, what it must be and what it got', () => {
    assert.throws(
      () => loadConfig({ PORT: '80a', CHRONOQL_DEVICE: 'gpu', CHRONOQL_NEO4J_PASSWORD: 'short' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /PORT must be an integer from 0 to 65535, got "80a"/.test(error.message) &&
        /CHRONOQL_DEVICE must be cpu, cuda or auto, got "gpu"/.test(error.message) &&
        /CHRONOQL_NEO4J_PASSWORD must be at least 8 characters/.test(error.message),
    );
    assert.throws(() => loadConfig({ CHRONOQL_RATE_LIMIT: '0' }), /CHRONOQL_RATE_LIMIT must be an integer from 1 to 10000000, got "0"/);
    assert.throws(() => loadConfig({ CHRONOQL_ENV: 'staging' }), /CHRONOQL_ENV must be one of development, production, got "staging"/);
    assert.throws(() => loadConfig({ CHRONOQL_JWT_SECRET: 'x'.repeat(40) }), /CHRONOQL_JWT_ISSUER and CHRONOQL_JWT_AUDIENCE/);
    assert.throws(() => loadConfig({ CHRONOQL_JWT_SECRET: 'too short' }), /CHRONOQL_JWT_SECRET must be at least 32 bytes/);
    assert.throws(() => loadConfig({ CHRONOQL_LABEL_ENCODER: 'openai' }), /CHRONOQL_LABEL_ENCODER=openai needs CHRONOQL_OPENAI_BASE_URL/);
    assert.throws(() => loadConfig({ CHRONOQL_REQUIRE_CUDA: 'yes' }), /CHRONOQL_REQUIRE_CUDA must be one of 0, 1, got "yes"/);
    assert.throws(() => loadConfig({ CHRONOQL_REQUIRE_CUDA: '1', CHRONOQL_DEVICE: 'cpu' }), /CHRONOQL_REQUIRE_CUDA=1 asks for the GPU and CHRONOQL_DEVICE=cpu/);
    assert.throws(() => loadConfig({ CHRONOQL_DEVICE_MEMORY_MB: '0' }), /CHRONOQL_DEVICE_MEMORY_MB must be an integer from 1 to 1073741824, got "0"/);
  });
});
