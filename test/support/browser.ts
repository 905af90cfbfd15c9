// Debian's chromium driven by playwright-core, for the tests that need a real browser: headless,
// and with Chromium's own background traffic off, so every request a page makes is the page's.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser tests skip on this machine, or false where they can run. */
export const chromiumMissing: string | false = existsSync(CHROMIUM) ? false : `no ${CHROMIUM} (apt-get install chromium)`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-background-networking'] });
}

/**
 * A page that may load only the URLs `allowed` accepts; any other request is refused and its URL
 * pushed onto `refused`, for the test to assert that it stayed empty.
 */
export async function offlinePage(browser: Browser, allowed: (url: string) => boolean, refused: string[]): Promise<Page> {
  const page = await browser.newPage();
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (allowed(url)) return route.continue();
    refused.push(url);
    return route.abort();
  });
  return page;
}
