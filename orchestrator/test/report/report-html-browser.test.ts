import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { buildReport } from '../../src/report/build-report';
import { renderHtml } from '../../src/report/render-html';
import { tempStateDir } from '../events/helpers';
import {
  INVENTORY,
  launchChromium,
  openReport,
  REPORT_TAGS,
  type PageInventory,
} from '../../../test/support/report-page';
import { CHILD, HTML_HOSTILE_TEXT, ROOT, writeRun } from './report-harness';

/**
 * The HTML report of a run whose every model-, repository- and approver-controlled string is
 * hostile markup, loaded in Debian's Chromium with JavaScript on and off: nothing it holds may
 * become an element, a handler, a URL, a request or a script that runs, and the page must read the
 * same without script. (The real CLI's page of real runs is test/e2e/report-html.test.ts.)
 */
describe('the hostile HTML report in a browser', () => {
  let browser: Browser;
  let file: string;
  beforeAll(async () => {
    browser = await launchChromium();
    const state = tempStateDir();
    writeRun(state, HTML_HOSTILE_TEXT);
    file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-report-html-')), 'report.html');
    writeFileSync(file, renderHtml(buildReport(state, ROOT)));
  });
  afterAll(async () => {
    await browser?.close();
    if (file) rmSync(path.dirname(file), { recursive: true, force: true });
  });

  for (const javaScript of [true, false])
    it(`shows it all as text, asks for and complains of nothing (script ${javaScript ? 'on' : 'off'})`, async () => {
      const r = await openReport(browser, file, { javaScript });
      try {
        expect(r.requests).toEqual([]);
        expect(r.complaints).toEqual([]);
        // Playwright reads the page from a world of its own, which works with the page's JavaScript off too.
        const found = await r.page.evaluate<PageInventory>(INVENTORY);
        {
          expect(found.tags.filter((t) => !REPORT_TAGS.includes(t))).toEqual([]);
          expect(found.handlers).toEqual([]);
          expect(found.urls.filter((u) => !/^#[a-z]+(-\d+)?$/.test(u))).toEqual([]);
          expect(found.scripts).toBe(0);
          expect(found.pwned).toBeNull();
          expect(found.markedElements).toEqual([]);
        }
        // The tree and the timeline are on screen, and the hostile text is there as text.
        await expect.poll(() => r.page.locator('#lineage .node').count()).toBe(2);
        expect(await r.page.locator(`#lineage [data-run="${CHILD}"]`).isVisible()).toBe(true);
        const denied = r.page.locator('li.call.stopped[data-call="call_4"]');
        expect(await denied.isVisible()).toBe(true);
        expect(await denied.locator('[data-phase="decision"]').textContent()).toContain(
          '</script><img src=x onerror=window.__pwned=1>',
        );
        expect(await r.page.locator('#answer pre').first().textContent()).toContain('<!-- an open comment');
        // The long diff is folded; opening it (no script needed) shows it.
        const diff = r.page.locator('details.diff pre');
        expect(await diff.isVisible()).toBe(false);
        await r.page.locator('details.diff > summary').click();
        expect(await diff.isVisible()).toBe(true);
        expect(await diff.textContent()).toContain('<script>window.__pwned = 1</script> line 3');
        // The CSS filter (a checkbox, no script) hides the calls that ran.
        const ran = r.page.locator('li.call.ran').first();
        expect(await ran.isVisible()).toBe(true);
        await r.page.locator('#only-stopped').check();
        expect(await ran.isVisible()).toBe(false);
        expect(await denied.isVisible()).toBe(true);
        expect(r.requests).toEqual([]);
        expect(r.complaints).toEqual([]);
      } finally {
        await r.close();
      }
    });
});

/**
 * Defence in depth: were markup ever to get past the escaping, the page's Content-Security-Policy
 * still stops it. Raw markup is planted in a real report and the page is loaded with nothing
 * intercepted: a listener of our own on loopback must receive no request, and no script may run.
 */
describe("the HTML report's Content-Security-Policy", () => {
  it('blocks planted scripts, images, style sheets, frames and inline styles', async () => {
    const hits: string[] = [];
    const server = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('x');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const browser = await launchChromium();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-report-csp-'));
    try {
      const state = tempStateDir();
      writeRun(state);
      const planted =
        `<img src="${base}/img"><script>window.__pwned=1</script><script src="${base}/js"></script>` +
        `<link rel="stylesheet" href="${base}/css"><iframe src="${base}/frame"></iframe>` +
        `<p id="styled" style="color: rgb(255, 0, 0)">styled</p>` +
        `<form action="${base}/form"><button id="go">go</button></form>`;
      const page = renderHtml(buildReport(state, ROOT)).replace('<main>', `<main>${planted}`);
      const file = path.join(dir, 'report.html');
      writeFileSync(file, page);
      const context = await browser.newContext();
      const p = await context.newPage();
      const violations: string[] = [];
      p.on('console', (m) => {
        if (m.type() === 'error' && m.text().includes('Content Security Policy')) violations.push(m.text());
      });
      await p.goto(pathToFileURL(file).href, { waitUntil: 'load' });
      await p.evaluate('document.getElementById("go").click()');
      await p.waitForTimeout(300);
      expect(await p.evaluate('window.__pwned ?? null')).toBeNull();
      expect(await p.evaluate('getComputedStyle(document.getElementById("styled")).color')).not.toBe('rgb(255, 0, 0)');
      expect(violations.length).toBeGreaterThanOrEqual(4);
      expect(hits).toEqual([]);
      await context.close();
    } finally {
      await browser.close();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
