import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * The HTML report as a person sees it: loaded from its file in Debian's Chromium (driven by
 * playwright-core; its own browser download cannot work offline) with every request other than the
 * file itself refused and recorded, and every console message and page error kept, so a test can
 * say the page asked for nothing and complained of nothing.
 */
export const CHROMIUM = process.env.GATEHOUSE_CHROMIUM ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: run scripts/setup.sh (it installs Debian's chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

export interface OpenedReport {
  page: Page;
  /** Every URL the page asked for besides its own file (each refused). */
  requests: string[];
  /** Console messages of type error or warning (a CSP violation is one), and uncaught page errors. */
  complaints: string[];
  close: () => Promise<void>;
}

export async function openReport(browser: Browser, file: string, o: { javaScript: boolean }): Promise<OpenedReport> {
  const url = pathToFileURL(file).href;
  const context = await browser.newContext({ javaScriptEnabled: o.javaScript, viewport: { width: 1200, height: 900 } });
  const requests: string[] = [];
  const complaints: string[] = [];
  await context.route('**/*', async (route) => {
    if (route.request().url() === url) return route.continue();
    requests.push(route.request().url());
    return route.abort();
  });
  const page = await context.newPage();
  page.on('request', (r) => {
    if (r.url() !== url && !requests.includes(r.url())) requests.push(r.url());
  });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') complaints.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => complaints.push(`page error: ${e.message}`));
  await page.goto(url, { waitUntil: 'load' });
  return { page, requests, complaints, close: () => context.close() };
}

/** What the page holds, read in the page (a string: this project's TypeScript has no DOM types). */
export interface PageInventory {
  /** Tag names of every element. */
  tags: string[];
  /** Attribute names that start with `on`, anywhere. */
  handlers: string[];
  /** Every href, src, srcset, action, formaction, data, poster or background attribute's value. */
  urls: string[];
  scripts: number;
  /** Set by any injected script or handler that ran. */
  pwned: unknown;
  /** Elements whose text, or attribute, carries a hostile marker the test planted (it must be none). */
  markedElements: string[];
}

export const INVENTORY = `(() => {
  const all = [...document.querySelectorAll('*')];
  const urlAttrs = ['href', 'src', 'srcset', 'action', 'formaction', 'data', 'poster', 'background', 'xlink:href'];
  return {
    tags: [...new Set(all.map((e) => e.tagName.toLowerCase()))].sort(),
    handlers: all.flatMap((e) => [...e.attributes].map((a) => a.name)).filter((n) => n.startsWith('on')),
    urls: all.flatMap((e) => urlAttrs.map((a) => e.getAttribute(a)).filter((v) => v !== null)),
    scripts: document.scripts.length,
    pwned: window.__pwned ?? null,
    markedElements: all
      .filter((e) => [...e.attributes].some((a) => /pwned|127\\.0\\.0\\.1/.test(a.value)))
      .map((e) => e.outerHTML.slice(0, 200)),
  };
})()`;

/** The only elements the report itself makes. */
export const REPORT_TAGS = [
  'a',
  'body',
  'br',
  'code',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'footer',
  'h1',
  'h2',
  'h3',
  'h4',
  'head',
  'header',
  'html',
  'input',
  'label',
  'li',
  'main',
  'meta',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'span',
  'strong',
  'style',
  'summary',
  'table',
  'tbody',
  'td',
  'th',
  'thead',
  'time',
  'title',
  'tr',
  'ul',
];
