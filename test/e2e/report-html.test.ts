import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { RunReport } from '@gatehouse/orchestrator';
import { cli, handoff, repo, run } from '../support/delegation';
import { INVENTORY, launchChromium, openReport, REPORT_TAGS, type PageInventory } from '../support/report-page';

/**
 * `gatehouse report RUN --format html` of a real tree: the real CLI, scripted models, real
 * sandboxes. The root writes a file of hostile markup and reads it back, delegates to a sub-agent
 * whose ask a person grants and whose `rm` the policy denies, then asks for a command a person
 * denies with a hostile reason. The page is loaded in Debian's Chromium with every request but its
 * own file refused, with JavaScript on and off, and a screenshot is written for a person to look at.
 */
const HOSTILE =
  '</script><img src=x onerror=window.__pwned=1><script>window.__pwned=2</script> <!-- open comment ' +
  '<a href="javascript:window.__pwned=3">click</a> \u202eevil\u202c <style>body{display:none}</style>';

describe('gatehouse report --format html (the real CLI after a real tree of runs)', () => {
  let browser: Browser;
  let state: string;
  let rootId: string;
  let childId: string;
  let html: string;
  let out: string;
  let dir: string;
  const gatehouse = (args: string[]) =>
    spawnSync(process.execPath, [cli, ...args, '--state-dir', state], {
      encoding: 'utf8',
      timeout: 180_000,
      env: { ...process.env, CI: 'true' },
      input: '',
    });

  beforeAll(async () => {
    browser = await launchChromium();
    dir = repo({
      'README.md': '# x\n',
      '.gatehouse/policy.json': JSON.stringify({
        mode: 'sandboxed-auto',
        ask: ['bash(echo ran*)'],
        deny: ['bash(rm *)'],
      }),
    });
    const script = {
      turns: [
        { toolCalls: [{ name: 'write_file', input: { path: 'notes.html', content: `${HOSTILE}\n` } }] },
        { toolCalls: [{ name: 'bash', input: { command: 'cat notes.html' } }] },
        { toolCalls: [handoff(`record the run ${HOSTILE}`, ['bash'], ['**'])] },
        { toolCalls: [{ name: 'bash', input: { command: 'echo ran-root >> ran.log' } }] },
        { final: `Wrote notes.html (obs-1). ${HOSTILE}` },
      ],
      children: [
        {
          turns: [
            { toolCalls: [{ name: 'bash', input: { command: 'echo ran >> ran.log' } }] },
            { toolCalls: [{ name: 'bash', input: { command: 'rm -rf README.md' } }] },
            { final: 'appended (obs-1)' },
          ],
        },
      ],
    };
    // The child's ask pauses the tree; a person grants it; the root's own ask pauses it again; a person denies it.
    const first = run(dir, script);
    expect(first.r.status, first.why).toBe(3);
    state = first.stateDir;
    rootId = first.rootId;
    childId = String(first.parent.find((e) => e.type === 'agent.spawned')!.data.childRunId);
    const pending = () =>
      gatehouse(['approvals', rootId, '--json'])
        .stdout.trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { runId: string; requestId: string });
    const granted = pending();
    expect(granted).toHaveLength(1);
    expect(gatehouse(['approve', rootId, granted[0]!.requestId, '--reason', 'logging is fine']).status).toBe(0);
    const second = gatehouse(['resume', rootId, '--json']);
    expect(second.status, second.stderr).toBe(3);
    const denied = pending();
    expect(denied).toHaveLength(1);
    expect(denied[0]!.runId).toBe(rootId);
    expect(gatehouse(['deny', rootId, denied[0]!.requestId, '--reason', `not now ${HOSTILE}`]).status).toBe(0);
    const last = gatehouse(['resume', rootId, '--json']);
    expect(last.status, last.stderr).toBe(0);

    out = mkdtempSync(path.join(os.tmpdir(), 'gh-report-html-'));
    const file = path.join(out, 'report.html');
    const r = gatehouse(['report', rootId, '--format', 'html', '--out', file]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    html = readFileSync(file, 'utf8');
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    // The report and its screenshot stay (their paths are printed); the repository and the runs go.
    for (const d of [dir, state]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('is one self-contained file: nothing to load, a CSP that forbids every load', () => {
    expect(html).toMatch(/^<!doctype html>\n/);
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;/);
    expect(html).not.toMatch(/<script|<img|<link|<iframe|<!--|@import|url\(/i);
    // The same page on stdout.
    expect(gatehouse(['report', rootId, '--format', 'html']).stdout).toBe(html);
  });

  it('tells the same verdict as gatehouse verify, for every log of the tree', () => {
    const json = gatehouse(['report', rootId, '--format', 'json']);
    expect(json.status, json.stderr).toBe(0);
    const report = RunReport.parse(JSON.parse(json.stdout));
    const agents = [report.agents, ...report.agents.children];
    expect(agents.map((a) => a.runId)).toEqual([rootId, childId]);
    for (const a of agents) {
      const v = JSON.parse(gatehouse(['verify', a.runId, '--json']).stdout) as { verdict: string; events: number };
      expect(a.verify).toMatchObject({ verdict: v.verdict, events: v.events });
      expect(html).toContain(`${a.verify.events}</td>`);
    }
  });

  for (const javaScript of [true, false])
    it(`shows the tree, the timeline and hostile text as text (script ${javaScript ? 'on' : 'off'})`, async () => {
      const r = await openReport(browser, path.join(out, 'report.html'), { javaScript });
      try {
        const { page } = r;
        const found = await page.evaluate<PageInventory>(INVENTORY);
        expect(found.tags.filter((t) => !REPORT_TAGS.includes(t))).toEqual([]);
        expect(found.handlers).toEqual([]);
        expect(found.urls.filter((u) => !/^#[a-z]+(-\d+)?$/.test(u))).toEqual([]);
        expect(found.scripts).toBe(0);
        expect(found.pwned).toBeNull();
        expect(found.markedElements).toEqual([]);

        // The lineage: the root and its sub-agent, with what it was handed and refused.
        const child = page.locator(`#lineage .node[data-run="${childId}"]`);
        expect(await page.locator(`#lineage .node[data-run="${rootId}"]`).isVisible()).toBe(true);
        expect(await child.isVisible()).toBe(true);
        const childText = (await child.textContent()) ?? '';
        expect(childText).toContain('record the run </script><img src=x onerror=window.__pwned=1>');
        expect(childText).toMatch(/handed over\s*tools bash; paths \*\*; budget 5 turns, 5 tool calls/);
        expect(childText).toMatch(/policy\s+bash by deny\[0\] bash\(rm \*\)/);
        expect(childText).toMatch(/outcome\s*final/);

        // The timeline: the sub-agent's granted ask and denied rm, the root's denied ask, the observation.
        const section = (runId: string) => page.locator(`section.agent[data-run="${runId}"]`);
        const childCalls = section(childId).locator('li.call');
        expect(await childCalls.count()).toBe(2);
        const asked = section(childId).locator('li.call[data-call="call_0_0"]');
        expect(await asked.isVisible()).toBe(true);
        expect(await asked.locator('[data-phase="approval"]').textContent()).toMatch(
          /granted by \S+ via cli, scope once at [\d:.]+: logging is fine/,
        );
        expect(await asked.locator('[data-phase="execution"]').textContent()).toContain('exit 0');
        const rm = section(childId).locator('li.call[data-call="call_1_0"]');
        expect(await rm.getAttribute('class')).toBe('call stopped');
        expect(await rm.locator('[data-phase="decision"]').textContent()).toContain('deny by rule deny[0] bash(rm *)');
        const rootCalls = section(rootId).locator('li.call');
        // Its own four, and the read and write gatehouse made to bring the sub-agent's change over.
        expect(await rootCalls.count()).toBe(6);
        const call = (id: string) => section(rootId).locator(`li.call[data-call="${id}"]`);
        const cat = call('call_1_0');
        expect(await cat.locator('[data-phase="intent"] pre').textContent()).toBe('cat notes.html');
        expect(await cat.locator('[data-phase="observation"] pre').textContent()).toContain(
          HOSTILE.replace('\u202e', '\\u{202e}').replace('\u202c', '\\u{202c}'),
        );
        expect(await call('call_2_0').locator('[data-phase="execution"] a').textContent()).toBe(childId);
        const deniedAsk = call('call_3_0');
        expect(await deniedAsk.getAttribute('class')).toBe('call stopped');
        expect(await deniedAsk.locator('[data-phase="approval"]').textContent()).toContain(
          'not now </script><img src=x onerror=window.__pwned=1>',
        );
        expect(await deniedAsk.locator('[data-phase="execution"]').textContent()).toContain('did not run');

        // Approvals: both, with who answered; the diff shows the hostile file as text.
        expect(await page.locator('#approvals tbody tr').count()).toBe(2);
        expect(await page.locator('#changes pre.diff').textContent()).toContain('+</script><img src=x');
        expect(await page.locator('#verify tbody tr').count()).toBe(2);
        expect(await page.locator('#usage').isVisible()).toBe(true);
        if (javaScript) {
          const shot = path.join(out, 'report.png');
          await page.screenshot({ path: shot, fullPage: true });
          process.stderr.write(`[report-html] screenshot of the report: ${shot}\n`);
        }
        expect(r.requests).toEqual([]);
        expect(r.complaints).toEqual([]);
      } finally {
        await r.close();
      }
    });
});
