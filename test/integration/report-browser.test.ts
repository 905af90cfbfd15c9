// The evaluation report in a real browser (Debian's chromium driven by playwright-core): the
// report writeReport leaves, served by the server at /reports, opens with every chart drawn and
// both tables shown, and it asks for nothing but the page, not even a file beside it.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { writeReport } from '../../eval/overTime/reportPage.js';
import { loadConfig } from '../../src/app/config.js';
import type { Runtime } from '../../src/app/runtime.js';
import { startServer, type RunningServer } from '../../src/api/server.js';
import { createLogger } from '../../src/platform/logger.js';
import { openTestRuntime } from '../support/runtime.js';
import { chromiumMissing, launchChromium, offlinePage } from '../support/browser.js';
import { overTimeFixture } from '../support/overTimeFixture.js';

describe('evaluation report in a browser', { skip: chromiumMissing }, () => {
  let dir: string;
  let charts: string[];
  let browser: Browser;
  let runtime: Runtime;
  let server: RunningServer;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'chronoql-report-browser-'));
    runtime = await openTestRuntime();
    server = await startServer(runtime, { ...loadConfig(), reportsDir: join(dir, 'published'), port: 0, host: '127.0.0.1', log: createLogger('silent') });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await runtime?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('says there is no report before one is published', async () => {
    const response = await fetch(new URL('/reports/', server.url));
    assert.equal(response.status, 404);
    assert.match(await response.text(), /chronoql eval --report/);
  });

  it('draws every chart and both tables at /reports, requesting nothing but the page', async () => {
    charts = (await writeReport(overTimeFixture(), join(dir, 'published'))).filter((path) => path.endsWith('.svg'));
    const index = new URL('/reports/', server.url).href;
    const refused: string[] = [];
    const errors: string[] = [];
    const page = await offlinePage(browser, (url) => url === index, refused);
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(index, { waitUntil: 'load' });

    const figures = page.locator('figure');
    assert.equal(await figures.count(), charts.length, 'one figure per chart file');
    for (let i = 0; i < charts.length; i++) {
      const svg = figures.nth(i).locator(':scope > svg');
      const box = await svg.boundingBox();
      assert.ok(box !== null && box.width > 100 && box.height > 100, `chart ${i + 1} is drawn (${JSON.stringify(box)})`);
      assert.ok((await svg.locator('text').count()) > 5, `chart ${i + 1} has its titles and labels`);
    }

    const table4 = page.locator('#table4');
    assert.ok(await table4.isVisible());
    assert.equal(await table4.locator('tbody tr').count(), 12, 'four types × three modes');
    assert.match(await table4.locator('tbody.type').nth(3).innerText(), /^ALL\s+NEVER\s+8\.3 \/ 14\.6\s+20\.0 \/ 26\.8\s+19\.4 \/ 26\.2/);
    const sizes = page.locator('#sizes');
    assert.ok(await sizes.isVisible());
    assert.deepEqual(await sizes.locator('tbody tr').allInnerTexts(), [
      '2024-01-01\t120\t0\t0\t120',
      '2024-04-01\t40\t25\t90\t155',
      '2024-07-01\t35\t30\t110\t175',
    ]);
    assert.match(await page.locator('.meta').innerText(), /Source\s+store\s+Finished\s+2024-07-02T09:41:27\.000Z/);

    assert.deepEqual(refused, [], 'the page requested nothing');
    assert.deepEqual(errors, []);
    await page.close();
  });
});
