// The explorer in a real browser (Debian's chromium driven by playwright-core): it loads with
// nothing but the server reachable, shows `ask` in its default query, loads the schema (the
// documentation and completion work), and a shared link with ?query=… opens the explorer with
// that query, which runs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { loadConfig } from '../../src/app/config.js';
import type { Runtime } from '../../src/app/runtime.js';
import { startServer, type RunningServer } from '../../src/api/server.js';
import { createLogger } from '../../src/platform/logger.js';
import { chromiumMissing, launchChromium, offlinePage } from '../support/browser.js';
import { openTestRuntime } from '../support/runtime.js';

describe('explorer in a browser', { skip: chromiumMissing }, () => {
  let runtime: Runtime;
  let server: RunningServer;
  let browser: Browser;
  const outside: string[] = [];

  before(async () => {
    runtime = await openTestRuntime();
    server = await startServer(runtime, { ...loadConfig(), port: 0, host: '127.0.0.1', log: createLogger('silent') });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await runtime?.close();
  });

  /** The query editor's text, its spaces as typed (the editor draws them as no-break spaces). */
  const editorText = async (page: Page): Promise<string> => (await page.locator('.graphiql-query-editor').innerText()).replace(/\s+/g, ' ');

  /** A page that may reach the ChronoQL server only: anything else is refused and remembered. */
  function serverOnlyPage(): Promise<Page> {
    const origin = new URL(server.url).origin;
    return offlinePage(browser, (url) => url.startsWith(origin) || url.startsWith('data:') || url.startsWith('blob:'), outside);
  }

  it('loads offline and shows ask in its default query', async () => {
    const page = await serverOnlyPage();
    await page.goto(server.url);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 30_000 });
    assert.match(await editorText(page), /ask\(question: "Who is the prime minister of France\?"/);
    assert.deepEqual(outside, [], 'nothing outside the server was requested');
    await page.close();
  });

  it('loads the schema: the documentation lists Query’s fields and completion offers ask while typing', async () => {
    const page = await serverOnlyPage();
    await page.goto(server.url);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 30_000 });
    // GraphiQL's own introspection query must pass the cost limit (it was refused: QUERY_TOO_COSTLY, cost 51,833).
    await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
    await page
      .locator('a.graphiql-doc-explorer-type-name', { hasText: /^Query$/ })
      .first()
      .click({ timeout: 30_000 });
    const fields = page.locator('.graphiql-doc-explorer-field-name');
    await fields.filter({ hasText: /^ask$/ }).waitFor({ timeout: 30_000 });
    const listed = await fields.allInnerTexts();
    for (const field of ['ask', 'batchAsk', 'fact', 'factHistory', 'search', 'snapshot', 'changes'])
      assert.ok(listed.includes(field), `${field} in ${listed.join(', ')}`);
    await page.locator('.graphiql-query-editor').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('{ as');
    await page.locator('.suggest-widget').getByRole('option', { name: 'ask', exact: true }).waitFor({ timeout: 30_000 });
    assert.deepEqual(outside, []);
    await page.close();
  });

  it('opens a shared link with ?query= as the explorer, with that query, and runs it', async () => {
    const page = await serverOnlyPage();
    const query = 'query Shared { articles(first: 1) { totalCount } }';
    const response = await page.goto(`${server.url}?query=${encodeURIComponent(query)}`);
    assert.equal(response?.status(), 200);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 30_000 });
    assert.match(await editorText(page), /articles\(first: 1\)/);
    await page.locator('.graphiql-execute-button').click();
    await page.waitForFunction(() => /"totalCount"/.test(document.querySelector('.graphiql-response')?.textContent ?? ''), undefined, { timeout: 30_000 });
    assert.deepEqual(outside, []);
    await page.close();
  });
});
