import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { marked } from 'marked';
import { chromium, type Browser } from 'playwright-core';
import { hostileMarkdown } from './report-harness';
import { planRunMarkdown } from './report-plan-harness';

/**
 * The hostile run's report as a person sees it: rendered by a GFM renderer that, unlike GitHub,
 * passes raw HTML through unsanitised (the worst case), loaded in Debian's Chromium. Nothing the
 * run wrote may become an element, a link, an image or a request, and the diff stays folded.
 */
const CHROMIUM = process.env.GATEHOUSE_CHROMIUM ?? '/usr/bin/chromium';

interface Inspection {
  /** Tag names of every element the rendered report holds. */
  elements: string[];
  /** on* attributes anywhere. */
  handlers: string[];
  details: Array<{ open: boolean; summary: string | null; code: string | null }>;
  /** Text outside code that reads as a mention. */
  mentions: string[];
  /** Set by any injected script or handler that ran. */
  pwned: unknown;
}

/** Runs in the page (a string: this project's TypeScript has no DOM types). */
const INSPECT = `(() => {
  const all = [...document.querySelectorAll('main *')];
  const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
  const mentions = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode())
    if (!n.parentElement.closest('code, pre') && /(^|\\W)@[a-z0-9]/i.test(n.textContent)) mentions.push(n.textContent);
  return {
    elements: [...new Set(all.map((e) => e.tagName.toLowerCase()))].sort(),
    handlers: all.flatMap((e) => [...e.attributes].map((a) => a.name)).filter((n) => n.startsWith('on')),
    details: [...document.querySelectorAll('main details')].map((d) => ({
      open: d.open,
      summary: d.querySelector(':scope > summary')?.textContent ?? null,
      code: d.querySelector(':scope > pre > code')?.className ?? null,
    })),
    mentions,
    pwned: window.__pwned ?? null,
  };
})()`;

describe('the hostile report in a browser', () => {
  let browser: Browser;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: run scripts/setup.sh (it installs Debian's chromium)`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows no injected element, link, image or request, and the diff inside a closed <details>', async () => {
    const html = await marked.parse(hostileMarkdown(), { gfm: true });
    const page = await browser.newPage();
    const requests: string[] = [];
    await page.route('**/*', async (route) => {
      requests.push(route.request().url());
      await route.abort();
    });
    await page.setContent(`<!doctype html><html><body><main>${html}</main></body></html>`, { waitUntil: 'load' });
    const found = await page.evaluate<Inspection>(INSPECT);
    // Only what the report itself makes: headings, paragraphs, lists, emphasis, code, a table, <details>.
    const allowed = ['code', 'details', 'em', 'h2', 'h3', 'li', 'p', 'pre', 'strong', 'summary', 'table', 'tbody'];
    allowed.push('td', 'th', 'thead', 'tr', 'ul');
    expect(found.elements.filter((e) => !allowed.includes(e))).toEqual([]);
    expect(found.handlers).toEqual([]);
    expect(found.mentions).toEqual([]);
    expect(found.pwned).toBeNull();
    expect(requests).toEqual([]);
    expect(found.details).toEqual([
      { open: false, summary: 'Output of the last check run', code: 'language-text' },
      { open: false, summary: found.details[1]?.summary, code: 'language-diff' },
    ]);
    expect(found.details[1]?.summary).toMatch(/^Diff: [\d,]+\+? lines$/);
    // Folded: the diff is not shown until the person opens it, and then it is.
    const diff = page.locator('details pre > code.language-diff');
    expect(await diff.isVisible()).toBe(false);
    await page.locator('details summary', { hasText: 'Diff:' }).click();
    expect(await diff.isVisible()).toBe(true);
    expect(await diff.textContent()).toContain('<script>window.__pwned = 1</script> line 3');
    if (process.env.GATEHOUSE_REPORT_SCREENSHOT)
      await page.screenshot({ path: process.env.GATEHOUSE_REPORT_SCREENSHOT, fullPage: true });
    await page.close();
  });

  it('a plan run: a task title written as markup stays text (no image, no link, no handler)', async () => {
    const html = await marked.parse(planRunMarkdown(), { gfm: true });
    const page = await browser.newPage();
    const requests: string[] = [];
    await page.route('**/*', async (route) => {
      requests.push(route.request().url());
      await route.abort();
    });
    await page.setContent(`<!doctype html><html><body><main>${html}</main></body></html>`, { waitUntil: 'load' });
    const found = await page.evaluate<Inspection>(INSPECT);
    // The report's own elements, as above (its tables are the usage's).
    const allowed = ['code', 'details', 'em', 'h2', 'h3', 'li', 'p', 'pre', 'strong', 'summary', 'table', 'tbody'];
    allowed.push('td', 'th', 'thead', 'tr', 'ul');
    expect(found.elements.filter((e) => !allowed.includes(e))).toEqual([]);
    expect(found.handlers).toEqual([]);
    expect(found.pwned).toBeNull();
    expect(requests).toEqual([]);
    expect(await page.locator('main').textContent()).toContain('<img src=x onerror=alert(1)>');
    await page.close();
  });
});
