// The report's only stylesheet, inlined: report.html loads nothing (no fonts,
// no CDN). Colours mark status, but every status is also written out.

/** CSS of report.html. */
export const REPORT_CSS = `
:root{--fg:#1b1f24;--muted:#59636e;--bg:#fff;--panel:#f6f8fa;--line:#d1d9e0;--link:#0550ae;
--ok:#1a7f37;--ok-bg:#dafbe1;--bad:#cf222e;--bad-bg:#ffebe9;--warn:#9a6700;--warn-bg:#fff8c5;
--deny:#8250df;--deny-bg:#fbefff;--off:#59636e;--off-bg:#eaeef2;--run:#0969da;--run-bg:#ddf4ff}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1200px;margin:0 auto;padding:1rem}
h1{font-size:1.45rem;margin:.2rem 0 .6rem;overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:1.8rem 0 .6rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}
h3{font-size:1.05rem;margin:0 0 .5rem;overflow-wrap:anywhere}
h4{font-size:.95rem;margin:.8rem 0 .3rem}
a{color:var(--link)}
a:focus-visible,summary:focus-visible{outline:3px solid var(--run);outline-offset:2px}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:.6rem;margin:.3rem 0;overflow:auto;max-height:32rem;white-space:pre-wrap;overflow-wrap:anywhere}
nav ul{display:flex;flex-wrap:wrap;gap:.3rem 1rem;list-style:none;padding:0;margin:.4rem 0}
.muted{color:var(--muted)}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--bg);padding:.3rem}
.badge{display:inline-block;border:1px solid currentColor;border-radius:1rem;padding:0 .55rem;font-size:.85rem;font-weight:600;white-space:nowrap}
.st-succeeded{--c:var(--ok);--cb:var(--ok-bg)}.st-failed{--c:var(--bad);--cb:var(--bad-bg)}
.st-denied{--c:var(--deny);--cb:var(--deny-bg)}.st-cancelled,.st-skipped,.st-pending,.st-unknown{--c:var(--off);--cb:var(--off-bg)}
.st-running,.st-queued,.st-waiting{--c:var(--run);--cb:var(--run-bg)}
.badge{color:var(--c);background:var(--cb)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:.4rem 0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
.summary dl.facts{grid-template-columns:max-content 1fr max-content 1fr}
.error{background:var(--bad-bg);border-left:4px solid var(--bad);padding:.4rem .6rem;margin:.4rem 0;overflow-wrap:anywhere;white-space:pre-wrap}
.unknown{background:var(--warn-bg);border:2px solid var(--warn);padding:.4rem .6rem;margin:.4rem 0}
.graph-box{overflow:auto;border:1px solid var(--line);border-radius:6px;max-height:80vh;background:var(--panel)}
svg.graph{display:block;font:13px system-ui,sans-serif}
svg.graph .edges path{fill:none;stroke:#8c959f;stroke-width:1.4}svg.graph .edges path.implicit{stroke-dasharray:5 4}
svg.graph .arrowhead{fill:#8c959f}
svg.graph .node rect{fill:var(--cb);stroke:var(--c);stroke-width:2}
svg.graph .node.st-failed rect,svg.graph .node.st-denied rect{stroke-width:3}
svg.graph .node.st-skipped rect,svg.graph .node.st-cancelled rect,svg.graph .node.st-pending rect{stroke-dasharray:5 3}
svg.graph .node text{fill:var(--fg)}svg.graph .node-id{font-weight:600}
svg.graph .node-tool{font-size:11.5px;fill:var(--muted)}svg.graph .node-status,svg.graph .node-items{font-size:11.5px;font-weight:600}
svg.graph .node:focus-visible rect,svg.graph .node:hover rect{stroke:var(--run);stroke-width:4}
.legend{display:flex;flex-wrap:wrap;gap:.4rem;list-style:none;padding:0;margin:.4rem 0}
.timeline{list-style:none;padding:0;margin:0}
.tl-axis{display:flex;justify-content:space-between;margin-left:min(16rem,40%);font-size:.8rem;color:var(--muted)}
.tl-row{display:flex;align-items:center;gap:.5rem;border-top:1px solid var(--panel);min-height:1.6rem}
.tl-label{flex:0 0 min(16rem,40%);font-size:.85rem;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.tl-item .tl-label{padding-left:1rem}
.tl-meta{color:var(--muted)}
.tl-track{position:relative;flex:1;height:1.1rem;background:var(--panel);border-radius:3px}
.tl-bar{position:absolute;top:.15rem;bottom:.15rem;border-radius:2px;background:var(--c);min-width:2px}
.tl-span{top:.4rem;bottom:.4rem;opacity:.35}
.tl-attempt+.tl-attempt{box-shadow:-2px 0 0 var(--bg)}
.step{border:1px solid var(--line);border-left:6px solid var(--c);border-radius:6px;padding:.7rem .9rem;margin:.8rem 0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:.4rem 0;font-size:.9rem}
caption{text-align:left;font-weight:600;padding:.2rem 0}
th,td{border:1px solid var(--line);padding:.2rem .5rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
tbody tr.st-failed td,tbody tr.st-denied td,tbody tr.st-cancelled td{background:var(--cb)}
details>summary{cursor:pointer;margin:.3rem 0}
ul.files{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.8rem}
ul.files li{display:flex;flex-direction:column;gap:.2rem;max-width:100%;overflow-wrap:anywhere}
.thumb img{display:block;max-width:160px;height:auto;border:1px solid var(--line);background:repeating-conic-gradient(#eee 0 25%,#fff 0 50%) 0 0/16px 16px}
@media (max-width:640px){main{padding:.5rem}.summary dl.facts{grid-template-columns:max-content 1fr}
.tl-row{flex-wrap:wrap}.tl-label{flex-basis:100%}.tl-axis{margin-left:0}h1{font-size:1.2rem}}
@media print{.graph-box{max-height:none;overflow:visible}pre{max-height:none}}
`;
