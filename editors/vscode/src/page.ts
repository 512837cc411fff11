// The Reika panel's page. It draws what the extension posts: the header
// (the run's state and the context chip), and each run — the question,
// its rounds and tool calls folded in a <details> under one line, the
// question waiting for the user's answer, the answer's HTML (rendered and
// escaped by markdown.ts in the extension: the page adds no HTML of the
// model's), the changed files as links, the summary. It posts back the
// user's question, link clicks (the extension checks and opens them), and
// what it rendered (for the extension's API and its tests). The Content
// Security Policy allows only this page's own style and script (a nonce):
// no network, no inline handlers, no script in what the model wrote.

export function page(n: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${n}'; script-src 'nonce-${n}';">
<style nonce="${n}">${style}</style></head><body>
<header id="head"><span id="state" class="idle">Ready</span><span id="chip"></span></header>
<div id="turns"><p class="hint">Ask Reika below, or run <b>Reika: Ask</b> with a file and a selection.</p></div>
<form id="ask"><textarea id="q" rows="2" placeholder="Ask Reika (click here, then Enter sends; Ctrl+Enter always does)"></textarea><button type="submit">Ask</button></form>
<script nonce="${n}">${script}</script></body></html>`;
}

const style = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 14px 96px; line-height: 1.5; }
header { position: sticky; top: 0; z-index: 1; display: flex; justify-content: space-between; align-items: center; gap: 8px;
  margin: 0 -14px; padding: 6px 14px; background: var(--vscode-sideBar-background, var(--vscode-editor-background)); border-bottom: 1px solid var(--vscode-panel-border); }
#state { font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#state::before { content: "●"; margin-right: 6px; color: var(--vscode-descriptionForeground); }
#state.working::before { color: var(--vscode-progressBar-background); }
#state.waiting { color: var(--vscode-editorWarning-foreground); }
#state.waiting::before { content: "?"; color: var(--vscode-editorWarning-foreground); }
#state.done::before { content: "✓"; color: var(--vscode-testing-iconPassed, var(--vscode-foreground)); }
#chip { font-family: var(--vscode-editor-font-family); font-size: 0.85em; padding: 1px 8px; border-radius: 10px; white-space: nowrap;
  background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
#chip:empty { display: none; }
#chip.warn { background: var(--vscode-statusBarItem-warningBackground); color: var(--vscode-statusBarItem-warningForeground); }
.turn { padding: 10px 0 12px; border-bottom: 1px solid var(--vscode-panel-border); }
.you { font-weight: 600; white-space: pre-wrap; padding: 6px 10px; border-radius: 4px; background: var(--vscode-textBlockQuote-background); }
details.progress { margin: 6px 0; color: var(--vscode-descriptionForeground); font-size: 0.92em; }
details.progress summary { cursor: pointer; }
details.progress ol { margin: 4px 0; padding-left: 22px; font-family: var(--vscode-editor-font-family); font-size: 0.95em; }
.waiting { margin: 8px 0; padding: 6px 10px; white-space: pre-wrap; border-left: 3px solid var(--vscode-editorWarning-foreground);
  background: var(--vscode-inputValidation-warningBackground, transparent); }
.answer h2, .answer h3, .answer h4 { margin: 12px 0 4px; }
.answer p { margin: 6px 0; }
.answer ul, .answer ol { margin: 4px 0; padding-left: 22px; }
.answer code { font-family: var(--vscode-editor-font-family); background: var(--vscode-textCodeBlock-background); padding: 0 3px; border-radius: 3px; }
.answer pre { background: var(--vscode-textCodeBlock-background); padding: 8px 10px; border-radius: 4px; overflow-x: auto; }
.answer pre code { background: none; padding: 0; }
.answer blockquote { margin: 6px 0; padding-left: 10px; border-left: 3px solid var(--vscode-textBlockQuote-border); }
.tok-k { color: var(--vscode-symbolIcon-keywordForeground, #569cd6); }
.tok-s { color: var(--vscode-debugTokenExpression-string, #ce9178); }
.tok-n { color: var(--vscode-debugTokenExpression-number, #b5cea8); }
.tok-c { color: var(--vscode-descriptionForeground); font-style: italic; }
.edits { margin: 6px 0; padding: 0; list-style: none; }
.edits li::before { content: "✎ "; color: var(--vscode-descriptionForeground); }
.summary, .hint { color: var(--vscode-descriptionForeground); font-size: 0.9em; }
a { color: var(--vscode-textLink-foreground); cursor: pointer; text-decoration: none; }
a:hover { text-decoration: underline; }
form { position: fixed; bottom: 0; left: 0; right: 0; padding: 8px 12px; background: var(--vscode-editor-background); display: flex; gap: 6px; }
textarea { flex: 1; resize: none; font: inherit; color: var(--vscode-input-foreground); background: var(--vscode-input-background); border: 1px solid var(--vscode-input-border, transparent); }
button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 4px 12px; }
`;

const script = `
const vscode = acquireVsCodeApi();
const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
function header(h) {
  const state = document.getElementById("state");
  state.textContent = h.text; state.className = h.kind; state.title = h.waiting || h.text;
  const chip = document.getElementById("chip");
  chip.textContent = h.chip; chip.className = h.warning ? "warn" : "";
}
function turn(t, i, last, h, open) {
  const d = el("div", "turn");
  d.append(el("div", "you", t.instruction));
  if (t.progress.length > 0 || t.end === "") {
    const det = el("details", "progress");
    det.dataset.turn = String(i);
    det.open = open.has(i);
    det.append(el("summary", "", (t.end === "" ? "⟳ " : "") + t.fold));
    const ol = el("ol");
    for (const p of t.progress) ol.append(el("li", "", p));
    det.append(ol);
    d.append(det);
  }
  if (last && h.waiting) d.append(el("div", "waiting", h.waiting));
  if (t.answerHtml !== undefined) {
    const a = el("div", "answer");
    a.innerHTML = t.answerHtml; // rendered and escaped by the extension (markdown.ts)
    d.append(a);
  }
  if (t.edits.length > 0) {
    const ul = el("ul", "edits");
    for (const e of t.edits) {
      const a = el("a", "", e.name + ":" + (e.line + 1));
      a.onclick = () => vscode.postMessage({ open: { uri: e.uri, line: e.line } });
      const li = el("li"); li.append(a); ul.append(li);
    }
    d.append(ul);
  }
  if (t.summary) d.append(el("div", "summary", t.summary));
  return d;
}
function render(turns, h) {
  header(h);
  const root = document.getElementById("turns");
  // The user's open or closed progress stays as they left it.
  const open = new Set([...root.querySelectorAll("details.progress")].filter((x) => x.open).map((x) => Number(x.dataset.turn)));
  if (turns.length > 0) root.replaceChildren(...turns.map((t, i) => turn(t, i, i === turns.length - 1, h, open)));
  window.scrollTo(0, document.body.scrollHeight);
  report();
}
// What the page shows, for the extension's API (and its tests).
function report() {
  const texts = (root, sel) => [...root.querySelectorAll(sel)].map((e) => e.textContent.trim());
  const turns = [...document.querySelectorAll(".turn")].map((t) => {
    const a = t.querySelector(".answer") || document.createElement("div");
    const det = t.querySelector("details.progress");
    return {
      answered: !!t.querySelector(".answer"),
      headings: texts(a, "h1, h2, h3, h4, h5, h6"),
      items: texts(a, "li"),
      code: [...a.querySelectorAll("pre")].map((p) => ({ lang: p.dataset.lang || "", tokens: p.querySelectorAll("span[class^=tok-]").length })),
      links: texts(a, "a.file"),
      scripts: a.querySelectorAll("script, iframe, img, [onerror], [onclick]").length,
      progress: { folded: !!det && !det.open, summary: det ? det.querySelector("summary").textContent : "", lines: det ? det.querySelectorAll("li").length : 0 },
    };
  });
  vscode.postMessage({ rendered: { header: document.getElementById("head").innerText, turns } });
}
// Links in an answer: a file of the workspace at a line, or a web page;
// the extension checks and opens them.
document.addEventListener("click", (e) => {
  const a = e.target.closest && e.target.closest("a.file, a.ext");
  if (!a) return;
  e.preventDefault();
  if (a.classList.contains("file")) vscode.postMessage({ openPath: { path: a.dataset.path, line: Number(a.dataset.line) } });
  else vscode.postMessage({ openExternal: a.dataset.href });
});
document.addEventListener("toggle", () => report(), true);
// Enter sends only what the user typed here on purpose: once they clicked
// into the panel or asked for its input (Reika: Ask from the panel), until
// the panel loses the focus. Text that reached the input otherwise (the
// keyboard the user meant for the editor) is never sent by Enter, which
// then makes a new line; the Ask button and Ctrl+Enter always send.
let armed = false;
window.addEventListener("message", (e) => {
  if (e.data.turns) render(e.data.turns, e.data.header);
  if (e.data.focus) { armed = true; document.getElementById("q").focus(); }
});
const q = document.getElementById("q");
function send() { const v = q.value; if (v.trim() === "") return; q.value = ""; vscode.postMessage({ ask: v }); }
document.getElementById("ask").onsubmit = (e) => { e.preventDefault(); send(); };
q.addEventListener("keydown", (e) => {
  if (e.key !== "Enter" || e.shiftKey) return;
  if (e.ctrlKey || e.metaKey || armed) { e.preventDefault(); send(); }
});
window.addEventListener("pointerdown", () => { armed = true; });
window.addEventListener("blur", () => { armed = false; });
// The panel given the focus puts it in the input, unless a link has it.
window.addEventListener("focus", () => { if (document.activeElement === document.body) q.focus(); });
vscode.postMessage({ ready: true });
`;
