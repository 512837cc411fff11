import * as vscode from "vscode";
import { LensTelling } from "./lenstelling";
import type { ApplyWorkspaceEditParams, ApplyWorkspaceEditRequest, ApplyWorkspaceEditResult, ResponseError } from "vscode-languageclient/node";

// The review of Reika's applied edits. The server's edits apply at once
// (only a protected path, or a run that asks before every edit, goes
// through VS Code's refactor preview); the extension remembers each
// changed range it saw go through workspace/applyEdit, shows it (a line
// decoration, and a CodeLens "Keep · Undo" above it) and undoes it on
// request by putting the old text back, as long as the range still holds
// what Reika wrote. A change the user edits or undoes themselves leaves
// the review: it is theirs now.

/** One changed range of one file, as Reika left it. */
export interface Change {
  id: number;
  uri: string;
  /** Offsets of Reika's text in the document as it is now. */
  start: number;
  end: number;
  oldText: string;
  newText: string;
  /** The edit created the file: undoing it deletes the file. */
  created: boolean;
  /** The line it started on when it applied (0-based). */
  line: number;
}

/** A document's edits in an applyEdit, before it applied. */
interface Planned {
  uri: vscode.Uri;
  created: boolean;
  edits: { start: number; end: number; oldText: string; newText: string }[];
}

type Middleware = (params: ApplyWorkspaceEditParams, next: ApplyWorkspaceEditRequest.HandlerSignature) => Promise<ApplyWorkspaceEditResult | ResponseError<void>>;

export class Review implements vscode.Disposable, vscode.CodeLensProvider {
  private changes: Change[] = [];
  private seq = 0;
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly lenses = new LensTelling(() => this.changed.fire());
  private readonly recorded = new vscode.EventEmitter<Change[]>();
  private readonly decoration = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor("diffEditor.insertedLineBackground"),
    overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.addedForeground"),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly subscriptions: vscode.Disposable[];

  /** Fires when the changes under review change (for CodeLens). */
  readonly onDidChangeCodeLenses = this.changed.event;
  /** Fires with the changes an applied edit made. */
  readonly onDidRecord = this.recorded.event;

  constructor(readonly ids: { keep: string; undo: string; keepFile: string; undoFile: string }) {
    this.subscriptions = [
      vscode.languages.registerCodeLensProvider({ scheme: "file" }, this),
      vscode.workspace.onDidChangeTextDocument((e) => this.follow(e)),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
      vscode.commands.registerCommand(ids.keep, (uri: string, id: number) => this.keep((c) => c.id === id)),
      vscode.commands.registerCommand(ids.undo, (uri: string, id: number) => this.undo((c) => c.id === id)),
      vscode.commands.registerCommand(ids.keepFile, (uri?: string) => this.keep((c) => c.uri === fileOf(uri))),
      vscode.commands.registerCommand(ids.undoFile, (uri?: string) => this.undo((c) => c.uri === fileOf(uri))),
    ];
  }

  /** The changes under review, in order. */
  list(): Change[] {
    return this.changes.map((c) => ({ ...c }));
  }

  /** workspace/applyEdit's middleware: apply, then remember what changed. */
  readonly handleApplyEdit: Middleware = async (params, next) => {
    let planned: Planned[] = [];
    try {
      planned = await plan(params);
    } catch {
      planned = []; // the edit still goes to VS Code, unreviewed
    }
    const result = await next(params, new vscode.CancellationTokenSource().token);
    if ("applied" in result && result.applied) {
      await this.record(planned);
    }
    return result;
  };

  /** Keeps the changes matching which: they leave the review as they are. */
  keep(which: (c: Change) => boolean): number {
    const n = this.changes.length;
    this.changes = this.changes.filter((c) => !which(c));
    this.update();
    return n - this.changes.length;
  }

  /**
   * Undoes the changes matching which: the old text goes back wherever the
   * range still holds Reika's; the rest are left alone and named.
   * It returns how many were undone.
   */
  async undo(which: (c: Change) => boolean): Promise<number> {
    const picked = this.changes.filter(which);
    // They leave the review first: the undo's own change events must not
    // move them.
    this.changes = this.changes.filter((c) => !which(c));
    this.update();
    const edit = new vscode.WorkspaceEdit();
    const stale: string[] = [];
    let n = 0;
    for (const c of picked) {
      const uri = vscode.Uri.parse(c.uri);
      let doc: vscode.TextDocument;
      try {
        doc = await vscode.workspace.openTextDocument(uri);
      } catch {
        stale.push(vscode.workspace.asRelativePath(uri));
        continue;
      }
      const range = new vscode.Range(doc.positionAt(c.start), doc.positionAt(c.end));
      if (doc.getText(range) !== c.newText) {
        stale.push(vscode.workspace.asRelativePath(uri));
        continue;
      }
      if (c.created && c.start === 0 && c.end === doc.getText().length) {
        edit.deleteFile(uri, { ignoreIfNotExists: true });
      } else {
        edit.replace(uri, range, c.oldText);
      }
      n++;
    }
    if (n > 0 && !(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showWarningMessage("Reika: VS Code did not undo the changes");
      return 0;
    }
    if (stale.length > 0) {
      void vscode.window.showWarningMessage(`Reika: not undone, the text has changed since: ${[...new Set(stale)].join(", ")}`);
    }
    return n;
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const uri = doc.uri.toString();
    const mine = this.changes.filter((c) => c.uri === uri);
    this.lenses.asked(uri, mine.length > 0);
    const lenses: vscode.CodeLens[] = [];
    mine.forEach((c, i) => {
      const at = new vscode.Range(doc.positionAt(anchor(c)), doc.positionAt(anchor(c)));
      lenses.push(
        new vscode.CodeLens(at, { title: "$(check) Keep", command: this.ids.keep, arguments: [uri, c.id], tooltip: "Keep Reika's change" }),
        new vscode.CodeLens(at, { title: "$(discard) Undo", command: this.ids.undo, arguments: [uri, c.id], tooltip: "Put the old text back" }),
      );
      if (i === 0 && mine.length > 1) {
        lenses.push(
          new vscode.CodeLens(at, { title: `Keep all ${mine.length} in this file`, command: this.ids.keepFile, arguments: [uri] }),
          new vscode.CodeLens(at, { title: `Undo all ${mine.length} in this file`, command: this.ids.undoFile, arguments: [uri] }),
        );
      }
    });
    return lenses;
  }

  dispose(): void {
    this.lenses.dispose();
    this.subscriptions.forEach((d) => d.dispose());
    this.decoration.dispose();
    this.changed.dispose();
    this.recorded.dispose();
  }

  /** Finds where each planned edit landed; one that did not is not reviewed. */
  private async record(planned: Planned[]): Promise<void> {
    const added: Change[] = [];
    for (const p of planned) {
      let doc: vscode.TextDocument;
      try {
        doc = await vscode.workspace.openTextDocument(p.uri);
      } catch {
        continue;
      }
      let delta = 0;
      for (const e of [...p.edits].sort((a, b) => a.start - b.start)) {
        const start = e.start + delta;
        const end = start + e.newText.length;
        delta += e.newText.length - (e.end - e.start);
        if (e.oldText === e.newText || doc.getText(new vscode.Range(doc.positionAt(start), doc.positionAt(end))) !== e.newText) {
          continue;
        }
        added.push({ id: ++this.seq, uri: p.uri.toString(), start, end, oldText: e.oldText, newText: e.newText, created: p.created, line: doc.positionAt(start).line });
      }
    }
    if (added.length > 0) {
      this.changes.push(...added);
      this.update();
      this.recorded.fire(added.map((c) => ({ ...c })));
    }
  }

  /** Moves the changes below an edit of the user's; drops those it touches. */
  private follow(e: vscode.TextDocumentChangeEvent): void {
    const uri = e.document.uri.toString();
    if (e.contentChanges.length === 0 || !this.changes.some((c) => c.uri === uri)) {
      return;
    }
    let dropped = false;
    for (const ch of e.contentChanges) {
      const from = ch.rangeOffset;
      const to = from + ch.rangeLength;
      const d = ch.text.length - ch.rangeLength;
      this.changes = this.changes.filter((c) => {
        if (c.uri !== uri || from >= c.end && !(from === c.start && c.start === c.end)) {
          return true;
        }
        if (to <= c.start) {
          c.start += d;
          c.end += d;
          return true;
        }
        dropped = true;
        return false;
      });
    }
    if (dropped) {
      this.lenses.told([uri]);
    }
    this.decorate();
  }

  /**
   * Tells VS Code that the lenses of the changes' files changed, and
   * redraws the marks (at once: decorations need no asking).
   */
  private update(uris: string[] = this.everyUri()): void {
    this.lenses.told(uris);
    this.decorate();
  }

  private everyUri(): string[] {
    return [...new Set([...this.changes.map((c) => c.uri), ...this.lenses.shown()])];
  }

  private decorate(): void {
    for (const ed of vscode.window.visibleTextEditors) {
      const uri = ed.document.uri.toString();
      const ranges = this.changes.filter((c) => c.uri === uri).map((c) => {
        const start = ed.document.positionAt(c.start);
        let end = ed.document.positionAt(c.end);
        // A change that ends with its newline does not mark the next line.
        if (end.character === 0 && end.line > start.line) {
          end = new vscode.Position(end.line - 1, 0);
        }
        return new vscode.Range(start, end);
      });
      ed.setDecorations(this.decoration, ranges);
    }
  }
}

/**
 * Where a change's lens sits: at its first character that is not a line
 * break it begins with (a change that adds lines after a line starts at
 * that line's end, and its lens would sit above the line it follows).
 */
function anchor(c: Change): number {
  const lead = /^(\r?\n)*/.exec(c.newText)?.[0].length ?? 0;
  return c.start + Math.min(lead, c.end - c.start);
}

/** The active editor's file when no uri is given. */
function fileOf(uri?: string): string | undefined {
  return uri ?? vscode.window.activeTextEditor?.document.uri.toString();
}

/** Reads, before an edit applies, the text each of its text edits replaces. */
async function plan(params: ApplyWorkspaceEditParams): Promise<Planned[]> {
  const created = new Set<string>();
  const docs: { uri: string; edits: { range: { start: { line: number; character: number }; end: { line: number; character: number } }; newText: string }[] }[] = [];
  for (const c of params.edit.documentChanges ?? []) {
    if ("kind" in c) {
      if (c.kind === "create") {
        created.add(vscode.Uri.parse(c.uri).toString());
      }
      continue;
    }
    // A snippet edit (which Reika never sends) is not reviewed.
    docs.push({ uri: c.textDocument.uri, edits: c.edits.filter((e) => "newText" in e) });
  }
  for (const [uri, edits] of Object.entries(params.edit.changes ?? {})) {
    docs.push({ uri, edits });
  }
  const out: Planned[] = [];
  for (const d of docs) {
    const uri = vscode.Uri.parse(d.uri);
    const isNew = created.has(uri.toString());
    const doc = isNew ? undefined : await vscode.workspace.openTextDocument(uri);
    out.push({
      uri,
      created: isNew,
      edits: d.edits.map((e) => {
        if (!doc) {
          return { start: 0, end: 0, oldText: "", newText: e.newText };
        }
        const range = new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character);
        return { start: doc.offsetAt(range.start), end: doc.offsetAt(range.end), oldText: doc.getText(range), newText: e.newText };
      }),
    });
  }
  return out;
}
