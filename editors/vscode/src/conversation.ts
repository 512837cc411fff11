import * as vscode from "vscode";
import { AnswerParams } from "./names";

// The conversation, in a webview panel "Reika": each run's instruction,
// its progress lines as they stream ($/progress), the answer in full
// (reika/answer) and the files it changed, as links. VS Code's own Chat
// view cannot host it in code-server without a signed-in chat provider
// (see the README), so the panel is the extension's. An input at the
// bottom asks the next question.

/** One run as the panel shows it. */
export interface Turn {
  instruction: string;
  progress: string[];
  answer?: string;
  summary?: string;
  /** "" while running, else how the run ended: done, cancelled, failed… */
  end: string;
  edits: { uri: string; name: string; line: number }[];
}

export class Conversation implements vscode.Disposable {
  private readonly turns: Turn[] = [];
  private panel: vscode.WebviewPanel | undefined;
  /** The input should take the focus once the page is ready. */
  private wantFocus = false;
  /** The page has told it is ready. */
  private ready = false;

  constructor(private readonly onAsk: (instruction: string) => void) {}

  /** The runs so far: for the extension's API (and its tests). */
  state(): { turns: Turn[]; visible: boolean; active: boolean; ready: boolean } {
    return { turns: structuredClone(this.turns), visible: this.panel?.visible ?? false, active: this.panel?.active ?? false, ready: this.ready };
  }

  /**
   * Opens the panel (beside the editor), or brings it forward. It keeps
   * the focus where it is unless preserveFocus is false, which only the
   * user's own request for the panel's input asks (focusInput): a panel
   * that took the keyboard as its page loaded would take the user's
   * typing in the editor, and each Enter would send it as an ask.
   */
  show(preserveFocus = true): void {
    if (this.panel) {
      this.panel.reveal(undefined, preserveFocus);
      return;
    }
    const panel = vscode.window.createWebviewPanel("reika.conversation", "Reika", { viewColumn: vscode.ViewColumn.Beside, preserveFocus },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [] });
    panel.webview.html = html(nonce());
    panel.webview.onDidReceiveMessage((m: { ask?: string; open?: { uri: string; line: number }; ready?: boolean }) => {
      if (m.ready) {
        this.ready = true;
        this.render();
        if (this.wantFocus) {
          this.wantFocus = false;
          void panel.webview.postMessage({ focus: true });
        }
      } else if (typeof m.ask === "string" && m.ask.trim() !== "") {
        this.onAsk(m.ask);
      } else if (m.open) {
        const pos = new vscode.Position(m.open.line, 0);
        void vscode.window.showTextDocument(vscode.Uri.parse(m.open.uri), { selection: new vscode.Range(pos, pos), viewColumn: vscode.ViewColumn.One });
      }
    });
    panel.onDidDispose(() => {
      this.panel = undefined;
      this.ready = false;
    });
    this.panel = panel;
  }

  /** Puts the focus in the panel's input (for Reika: Ask from the panel). */
  focusInput(): void {
    // A new page is not listening yet: it asks for the focus when ready.
    this.wantFocus = this.panel === undefined;
    this.show(false);
    void this.panel?.webview.postMessage({ focus: true });
  }

  start(instruction: string): void {
    this.turns.push({ instruction, progress: [], end: "", edits: [] });
    this.render();
  }

  /** A run the server started: one this panel asked for already has its turn. */
  begin(message: string): void {
    if (!this.current()) {
      this.start(message);
    }
  }

  progress(line: string): void {
    const t = this.current();
    if (t && t.progress[t.progress.length - 1] !== line) {
      t.progress.push(line);
      this.render();
    }
  }

  /** The run's answer: it comes just after the run's progress ends. */
  answer(p: AnswerParams): void {
    const t = this.turns[this.turns.length - 1];
    if (t && t.answer === undefined) {
      t.answer = p.answer;
      t.summary = `${p.summary} · ${p.chip}`;
      this.render();
    }
  }

  ended(how: string): void {
    const t = this.current();
    if (t) {
      t.end = how || "done";
      this.render();
    }
  }

  edited(edits: { uri: string; name: string; line: number }[]): void {
    const t = this.current() ?? this.turns[this.turns.length - 1];
    if (t) {
      for (const e of edits) {
        if (!t.edits.some((x) => x.uri === e.uri && x.line === e.line)) {
          t.edits.push(e);
        }
      }
      this.render();
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }

  private current(): Turn | undefined {
    const t = this.turns[this.turns.length - 1];
    return t && t.end === "" ? t : undefined;
  }

  private render(): void {
    void this.panel?.webview.postMessage({ turns: this.turns });
  }
}

function nonce(): string {
  let s = "";
  for (let i = 0; i < 32; i++) {
    s += "abcdefghijklmnopqrstuvwxyz0123456789"[Math.floor(Math.random() * 36)];
  }
  return s;
}

// The page: it renders what the extension posts, as text (never HTML from
// the model), and posts back the user's question and link clicks.
function html(n: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${n}'; script-src 'nonce-${n}';">
<style nonce="${n}">
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 12px 90px; }
.turn { border-bottom: 1px solid var(--vscode-panel-border); padding: 8px 0; }
.you { font-weight: bold; white-space: pre-wrap; }
.progress { color: var(--vscode-descriptionForeground); font-family: var(--vscode-editor-font-family); font-size: 0.9em; margin: 4px 0; }
.answer { white-space: pre-wrap; margin: 6px 0; }
.summary, .end { color: var(--vscode-descriptionForeground); font-size: 0.9em; }
a { color: var(--vscode-textLink-foreground); cursor: pointer; }
form { position: fixed; bottom: 0; left: 0; right: 0; padding: 8px 12px; background: var(--vscode-editor-background); display: flex; gap: 6px; }
textarea { flex: 1; resize: none; font: inherit; color: var(--vscode-input-foreground); background: var(--vscode-input-background); border: 1px solid var(--vscode-input-border, transparent); }
button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 4px 12px; }
</style></head><body>
<div id="turns"><p class="end">Ask Reika below, or run <b>Reika: Ask</b> with a file and a selection.</p></div>
<form id="ask"><textarea id="q" rows="2" placeholder="Ask Reika (click here, then Enter sends; Ctrl+Enter always does)"></textarea><button type="submit">Ask</button></form>
<script nonce="${n}">
const vscode = acquireVsCodeApi();
const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
function render(turns) {
  const root = document.getElementById("turns");
  root.replaceChildren(...turns.map((t) => {
    const d = el("div", "turn");
    d.append(el("div", "you", "› " + t.instruction));
    for (const p of t.progress) d.append(el("div", "progress", p));
    if (t.answer !== undefined) d.append(el("div", "answer", t.answer));
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
    d.append(el("div", "end", t.end === "" ? "working…" : t.end));
    return d;
  }));
  window.scrollTo(0, document.body.scrollHeight);
}
// Enter sends only what the user typed here on purpose: once they clicked
// into the panel or asked for its input (Reika: Ask from the panel), until
// the panel loses the focus. Text that reached the input otherwise (the
// keyboard the user meant for the editor) is never sent by Enter, which
// then makes a new line; the Ask button and Ctrl+Enter always send.
let armed = false;
window.addEventListener("message", (e) => {
  if (e.data.turns) render(e.data.turns);
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
</script></body></html>`;
}
