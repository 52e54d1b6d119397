/**
 * The HTML report's whole style sheet, inlined (the page loads nothing). The page's
 * Content-Security-Policy allows this exact text by its hash and no other style, so it holds no
 * value from the run. The filter at the top is CSS alone (:has on a checkbox): it works without script.
 */
export const REPORT_CSS = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa;
  --border: #d1d9e0; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --info: #0969da;
  --add: #dafbe1; --del: #ffebe9; --hunk: #ddf4ff; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --panel: #151b23; --border: #3d444d; --ok: #3fb950;
    --bad: #f85149; --warn: #d29922; --info: #4493f8; --add: #12361f; --del: #3c1618; --hunk: #0c2d4b; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", "Noto Sans", "DejaVu Sans", sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 20px 24px 64px; }
h1 { font-size: 22px; margin: 0 0 4px; display: flex; gap: 10px; align-items: center; flex-wrap: wrap; }
h2 { font-size: 18px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--border); }
h3 { font-size: 15px; margin: 18px 0 8px; }
h4 { font-size: 13px; margin: 12px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
a { color: var(--info); text-decoration: none; }
a:hover { text-decoration: underline; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  font-size: 12.5px; }
code { background: var(--panel); border: 1px solid var(--border); border-radius: 4px; padding: 0 4px;
  overflow-wrap: anywhere; white-space: pre-wrap; }
pre { background: var(--panel); border: 1px solid var(--border); border-radius: 6px; padding: 8px 10px;
  margin: 4px 0; overflow: auto; max-height: 32em; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.diff { white-space: pre; max-height: 48em; }
.diff .add { background: var(--add); display: inline-block; min-width: 100%; }
.diff .del { background: var(--del); display: inline-block; min-width: 100%; }
.diff .hunk { background: var(--hunk); color: var(--muted); display: inline-block; min-width: 100%; }
.muted { color: var(--muted); }
.small { font-size: 12px; }
.badge { display: inline-block; padding: 0 8px; border-radius: 999px; font-size: 12px; font-weight: 600;
  line-height: 20px; border: 1px solid currentColor; white-space: nowrap; }
.ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); } .info { color: var(--info); }
.neutral { color: var(--muted); }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 12px 0; }
.facts dt { color: var(--muted); } .facts dd { margin: 0; min-width: 0; }
nav.toc { display: flex; flex-wrap: wrap; gap: 6px 14px; margin: 14px 0; padding: 8px 12px;
  background: var(--panel); border: 1px solid var(--border); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; margin: 6px 0; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid var(--border);
  overflow-wrap: anywhere; }
th { color: var(--muted); font-weight: 600; font-size: 12px; }
table.approvals td:nth-child(2) { min-width: 16em; }
table.approvals code, table.usage a, table.verify a, table.approvals a { white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
ul.tree, ul.children { list-style: none; margin: 0; padding-left: 0; }
ul.children { border-left: 2px solid var(--border); margin-left: 9px; padding-left: 18px; }
.node { border: 1px solid var(--border); border-radius: 8px; padding: 8px 12px; margin: 8px 0; background: var(--bg); }
.node-head { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
ul.plain { list-style: none; margin: 0; padding-left: 0; }
.agent { margin-top: 28px; padding-top: 8px; border-top: 3px double var(--border); }
.agent > h3 { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; font-size: 16px; }
ol.timeline { list-style: none; margin: 0; padding: 0; }
li.call { border: 1px solid var(--border); border-left-width: 4px; border-radius: 8px; margin: 10px 0; }
li.call.ran { border-left-color: var(--ok); } li.call.stopped { border-left-color: var(--bad); }
li.call.waiting { border-left-color: var(--warn); }
.call-head { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; padding: 6px 12px;
  background: var(--panel); border-bottom: 1px solid var(--border); border-radius: 0 7px 0 0; }
.call-head .tool { font-weight: 700; }
.flow { margin-left: auto; font-size: 12px; color: var(--muted); }
ol.phases { list-style: none; margin: 0; padding: 6px 12px 10px; }
li.phase { display: grid; grid-template-columns: 104px 1fr 92px; gap: 10px; padding: 4px 0;
  border-bottom: 1px dashed var(--border); }
li.phase:last-child { border-bottom: 0; }
li.phase > .name { font-weight: 600; color: var(--muted); }
li.phase > .when { text-align: right; color: var(--muted); font-size: 12px; font-variant-numeric: tabular-nums; }
li.phase > .what { min-width: 0; }
details > summary { cursor: pointer; color: var(--info); margin: 2px 0; }
.filter { margin: 8px 0; font-size: 13px; }
body:has(#only-stopped:checked) li.call:not(.stopped):not(.waiting) { display: none; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
`;
