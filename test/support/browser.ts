import { expect } from '@jest/globals';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
// @ts-expect-error plain ESM script without types
import { ensureChromium } from '../../scripts/services.mjs';

/**
 * Headless Debian chromium (installed on first use, like the other local services). `*.localhost`
 * goes to 127.0.0.1, so a page opened at http://{tenant}.localhost:PORT names its tenant by host.
 */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = (ensureChromium as () => string)();
  const browser = await puppeteer.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-dev-shm-usage',
      '--disable-gpu',
      '--disable-breakpad',
      '--host-resolver-rules=MAP *.localhost 127.0.0.1',
    ],
  });
  // Chromium's helper processes can hold the browser's stdio pipes open after it exits; closing the
  // browser also closes this process's ends of them, so the test file leaves nothing running.
  const proc = browser.process();
  const close = browser.close.bind(browser);
  browser.close = async () => {
    await close();
    for (const stream of proc?.stdio ?? []) stream?.destroy();
  };
  return browser;
}

export interface PageWatch {
  /** Content-Security-Policy violations the page reported (event and console). */
  cspViolations: string[];
  /** Uncaught page errors, console errors and responses of 400 or more (with their URL). */
  errors: string[];
}

/** Collects CSP violations (securitypolicyviolation events and console reports) and errors of a page. */
export async function watchPage(page: Page): Promise<PageWatch> {
  const watch: PageWatch = { cspViolations: [], errors: [] };
  await page.exposeFunction('__reportCsp', (v: string) => void watch.cspViolations.push(v));
  // A string: this test code has no DOM types, the page runs it before its own scripts.
  await page.evaluateOnNewDocument(`document.addEventListener('securitypolicyviolation', (e) =>
    window.__reportCsp(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber));`);
  page.on('console', (m) => {
    const text = m.text();
    if (/Content Security Policy/i.test(text)) watch.cspViolations.push(text);
    // A failed load is reported with its URL by the response listener below.
    else if (m.type() === 'error' && !/^Failed to load resource/.test(text)) watch.errors.push(text);
  });
  page.on('pageerror', (e) => void watch.errors.push(String(e)));
  page.on('response', (r) => {
    if (r.status() >= 400) watch.errors.push(`${r.status()} ${r.url()}`);
  });
  return watch;
}

export interface WatchedPage {
  page: Page;
  watch: PageWatch;
}

/** One headless chromium for a test file, handing out watched pages. */
export interface BrowserFixture {
  /**
   * A page in a browser context of its own (no cookies or storage left by other pages), watched
   * from its first document on, with the fixture's time limit for waits and navigations.
   */
  newPage(): Promise<WatchedPage>;
  /** Closes the browser with every context and page it handed out. */
  close(): Promise<void>;
}

/**
 * Launches chromium for a test file's beforeAll (the first launch may install it: give that hook
 * minutes). `pageTimeoutMs` is how long a page may take to render on a loaded machine.
 */
export async function openBrowser({
  pageTimeoutMs = 60_000,
}: { pageTimeoutMs?: number } = {}): Promise<BrowserFixture> {
  const browser = await launchBrowser();
  return {
    async newPage() {
      const page = await (await browser.createBrowserContext()).newPage();
      page.setDefaultTimeout(pageTimeoutMs);
      return { page, watch: await watchPage(page) };
    },
    close: () => browser.close(),
  };
}

/** The page broke no Content-Security-Policy rule, threw nothing, logged no error, loaded nothing that failed. */
export function expectCleanPage(watch: PageWatch): void {
  expect({ cspViolations: watch.cspViolations, errors: watch.errors }).toEqual({ cspViolations: [], errors: [] });
}
