import * as vscode from "vscode";
import { render as renderMarkdown } from "./markdown";
import { AnswerParams, StatusParams } from "./names";
import { page } from "./page";
import { warns } from "./status";

// The conversation, in a webview panel "Reika": a header with the run's
// state (working, waiting for your answer, done) and the context chip;
// each run's instruction, its rounds and tool calls folded under one
// progress line the user can open, the answer rendered from Markdown
// (markdown.ts) and the files it changed, as links. VS Code's own Chat
// view cannot host it in code-server without a signed-in chat provider
// (see the README), so the panel is the extension's. An input at the
// bottom asks the next question.

/** One run as the panel shows it. */
export interface Turn {
  instruction: string;
  /** The rounds and tool calls, one line each ("running X (N s)" kept to its last). */
  progress: string[];
  answer?: string;
  /** The answer rendered to HTML, its text escaped. */
  answerHtml?: string;
  summary?: string;
  /** "" while running, else how the run ended: done, cancelled, failed… */
  end: string;
  edits: { uri: string; name: string; line: number }[];
  /** When it started and ended (ms since the epoch). */
  started: number;
  finished?: number;
}

/** What the page reports it rendered: for the extension's API (and its tests). */
export interface Rendered {
  header: string;
  turns: {
    answered: boolean;
    headings: string[];
    items: string[];
    code: { lang: string; tokens: number }[];
    links: string[];
    scripts: number;
    progress: { folded: boolean; summary: string; lines: number };
  }[];
}

export class Conversation implements vscode.Disposable {
  private readonly turns: Turn[] = [];
  private panel: vscode.WebviewPanel | undefined;
  /** The input should take the focus once the page is ready. */
  private wantFocus = false;
  /** The page has told it is ready. */
  private ready = false;
  /** The questions waiting for the user's answer, oldest first. */
  private readonly questions: { id: number; text: string }[] = [];
  private questionSeq = 0;
  private chip: { text: string; warning: boolean } | undefined;
  private rendered: Rendered | undefined;

  constructor(private readonly onAsk: (instruction: string) => void, private readonly onOpen: (path: string, line: number) => void) {}

  /** The runs so far: for the extension's API (and its tests). */
  state(): { turns: Turn[]; visible: boolean; active: boolean; ready: boolean; header: string; waiting: string; rendered?: Rendered } {
    return {
      turns: structuredClone(this.turns), visible: this.panel?.visible ?? false, active: this.panel?.active ?? false, ready: this.ready,
      header: this.header().text, waiting: this.questions[0]?.text ?? "", rendered: this.rendered && structuredClone(this.rendered),
    };
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
    panel.webview.html = page(nonce());
    panel.webview.onDidReceiveMessage((m: Message) => this.received(panel, m));
    panel.onDidDispose(() => {
      this.panel = undefined;
      this.ready = false;
      this.rendered = undefined;
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
    this.turns.push({ instruction, progress: [], end: "", edits: [], started: Date.now() });
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
    if (!t) {
      return;
    }
    const last = t.progress[t.progress.length - 1];
    // A tool's "running X (3 s)", "(6 s)"… is one line that counts up.
    const running = /^running (.*) \(\d+ s\)$/;
    if (last !== undefined && running.test(line) && running.exec(last)?.[1] === running.exec(line)?.[1]) {
      t.progress[t.progress.length - 1] = line;
    } else if (last !== line) {
      t.progress.push(line);
    } else {
      return;
    }
    this.render();
  }

  /** The run's answer: it comes just after the run's progress ends. */
  answer(p: AnswerParams): void {
    const t = this.turns[this.turns.length - 1];
    if (t && t.answer === undefined) {
      t.answer = p.answer;
      t.answerHtml = renderMarkdown(p.answer);
      t.summary = `${p.summary} · ${p.chip}`;
      this.render();
    }
  }

  ended(how: string): void {
    const t = this.current();
    if (t) {
      t.end = how || "done";
      t.finished = Date.now();
      this.questions.length = 0;
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

  /** The context chip, as the status bar shows it: the header shows it too. */
  status(p: StatusParams): void {
    this.chip = { text: p.text, warning: warns(p) };
    this.render();
  }

  /**
   * A question waits for the user's answer (a permission, or a change in
   * the refactor preview): the header says so until the returned function
   * is called.
   */
  waiting(question: string): () => void {
    const id = ++this.questionSeq;
    this.questions.push({ id, text: question });
    this.render();
    return () => {
      const i = this.questions.findIndex((q) => q.id === id);
      if (i >= 0) {
        this.questions.splice(i, 1);
        this.render();
      }
    };
  }

  dispose(): void {
    this.panel?.dispose();
  }

  /** The header's state line: what the run does now. */
  private header(): { text: string; kind: string } {
    const t = this.turns[this.turns.length - 1];
    if (this.questions.length > 0) {
      // The question itself is in the run, under the header.
      return { text: "Waiting for your answer", kind: "waiting" };
    }
    if (!t) {
      return { text: "Ready", kind: "idle" };
    }
    if (t.end === "") {
      const last = t.progress[t.progress.length - 1];
      // The chip beside it says the context: a round's line need not.
      return { text: last ? `Working · ${last.replace(/ · ctx .*$/, "")}` : "Working…", kind: "working" };
    }
    return { text: t.end === "done" ? "Done" : t.end.split("\n")[0], kind: t.end === "done" ? "done" : "ended" };
  }

  private received(panel: vscode.WebviewPanel, m: Message): void {
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
    } else if (m.openPath && typeof m.openPath.path === "string") {
      this.onOpen(m.openPath.path, Number(m.openPath.line) || 1);
    } else if (typeof m.openExternal === "string" && /^https?:\/\//i.test(m.openExternal)) {
      void vscode.env.openExternal(vscode.Uri.parse(m.openExternal));
    } else if (m.rendered) {
      this.rendered = m.rendered;
    }
  }

  private current(): Turn | undefined {
    const t = this.turns[this.turns.length - 1];
    return t && t.end === "" ? t : undefined;
  }

  private render(): void {
    const h = this.header();
    void this.panel?.webview.postMessage({
      turns: this.turns.map((t) => ({ ...t, fold: fold(t) })),
      header: { text: h.text, kind: h.kind, chip: this.chip?.text ?? "", warning: this.chip?.warning ?? false, waiting: this.questions[0]?.text ?? "" },
    });
  }
}

/** What the page sends. */
interface Message {
  ready?: boolean;
  ask?: string;
  open?: { uri: string; line: number };
  openPath?: { path: string; line: number };
  openExternal?: string;
  rendered?: Rendered;
}

/**
 * The one line the rounds and tool calls fold under: the latest while
 * the run works, then how many rounds and tool calls it took, and how long.
 */
export function fold(t: Turn): string {
  if (t.end === "") {
    return t.progress[t.progress.length - 1] ?? "starting…";
  }
  const rounds = t.progress.filter((l) => /^round \d+/.test(l)).length;
  // "running X (N s)" is a tool call under way; its result's line counts it.
  const tools = t.progress.filter((l) => !/^round \d+/.test(l) && !/^running /.test(l)).length;
  const parts = [`${rounds} ${rounds === 1 ? "round" : "rounds"}`];
  if (tools > 0) {
    parts.push(`${tools} tool ${tools === 1 ? "call" : "calls"}`);
  }
  if (t.finished !== undefined) {
    parts.push(`${Math.max(1, Math.round((t.finished - t.started) / 1000))} s`);
  }
  return parts.join(" · ");
}

function nonce(): string {
  let s = "";
  for (let i = 0; i < 32; i++) {
    s += "abcdefghijklmnopqrstuvwxyz0123456789"[Math.floor(Math.random() * 36)];
  }
  return s;
}
