import * as vscode from "vscode";
import {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditRequest,
  ApplyWorkspaceEditResult,
  MessageActionItem,
  MessageType,
  ResponseError,
  ShowMessageRequestParams,
} from "vscode-languageclient/node";
import { Conversation } from "./conversation";

// When the run waits for the user. A change that needs the user's yes (a
// protected path, or every change of a run that asks first) waits in VS
// Code's refactor preview, which names the file but not why it asks
// (the reason is only in a tooltip, and its boxes start unticked): a
// notification says it while the preview waits, and goes when it is
// answered; a question of the server's (a command to allow) is shown as
// vscode-languageclient shows it. Meanwhile the panel's header says that
// the run waits for the user's answer, and what the question is.

type Middleware = (params: ApplyWorkspaceEditParams, next: ApplyWorkspaceEditRequest.HandlerSignature) => Promise<ApplyWorkspaceEditResult | ResponseError<void>>;

/**
 * The question a change that needs confirmation asks, from its change
 * annotations (lsp/workspace_edit.go labels them "Reika: create .env
 * (PROTECTED: why)"); "" when none needs it.
 */
export function confirmQuestion(params: ApplyWorkspaceEditParams): string {
  const asks = Object.values(params.edit.changeAnnotations ?? {}).filter((a) => a.needsConfirmation);
  if (asks.length === 0) {
    return "";
  }
  const protectedOnes: string[] = [];
  const others: string[] = [];
  for (const a of asks) {
    const m = /^(?:Reika: )?(.*?)(?: \(PROTECTED: (.*)\))?$/s.exec(a.label);
    const what = m?.[1] ?? a.label;
    if (m?.[2]) {
      protectedOnes.push(`${what}: protected, ${m[2].replace(/^\S+ is protected: /, "")}`);
    } else {
      others.push(what);
    }
  }
  const lines: string[] = [];
  if (protectedOnes.length > 0) {
    lines.push(`Reika asks before it changes a protected file: ${protectedOnes.join("; ")}.`);
  }
  if (others.length > 0) {
    lines.push(`Reika asks before each change in this run: ${others.join("; ")}.`);
  }
  lines.push("Review it in the Refactor Preview: tick the change and Apply, or Discard.");
  return lines.join("\n");
}

/**
 * Wraps the review's applyEdit middleware: while a change that needs
 * confirmation waits in the preview, a notification and the panel say
 * so, and why; cancelling the notification discards the preview.
 */
export function confirmed(inner: Middleware, conversation: Conversation): Middleware {
  return async (params, next) => {
    const q = confirmQuestion(params);
    if (q === "") {
      return inner(params, next);
    }
    const done = conversation.waiting(q);
    let settle = () => {};
    const settled = new Promise<void>((resolve) => (settle = resolve));
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: q, cancellable: true }, async (_p, token) => {
      token.onCancellationRequested(() => void vscode.commands.executeCommand("refactorPreview.discard"));
      await settled;
    });
    try {
      return await inner(params, next);
    } finally {
      done();
      settle();
    }
  };
}

/** Shows a question of the server's; the panel says it waits until the answer. */
export async function question(p: ShowMessageRequestParams, conversation: Conversation): Promise<MessageActionItem | undefined> {
  const done = conversation.waiting(p.message);
  try {
    const actions = p.actions ?? [];
    switch (p.type) {
      case MessageType.Error:
        return await vscode.window.showErrorMessage(p.message, ...actions);
      case MessageType.Warning:
        return await vscode.window.showWarningMessage(p.message, ...actions);
      default:
        return await vscode.window.showInformationMessage(p.message, ...actions);
    }
  } finally {
    done();
  }
}

/**
 * Opens a file an answer names, at a line (1-based): only a file of one
 * of the workspace's folders; anything else is said, not opened.
 */
export async function openPath(path: string, line: number): Promise<void> {
  for (const f of vscode.workspace.workspaceFolders ?? []) {
    const uri = path.startsWith("/") ? vscode.Uri.file(path) : vscode.Uri.joinPath(f.uri, path);
    if (!uri.path.startsWith(f.uri.path.replace(/\/?$/, "/"))) {
      continue;
    }
    try {
      await vscode.workspace.fs.stat(uri);
    } catch {
      continue;
    }
    const pos = new vscode.Position(Math.max(0, line - 1), 0);
    await vscode.window.showTextDocument(uri, { selection: new vscode.Range(pos, pos), viewColumn: vscode.ViewColumn.One });
    return;
  }
  void vscode.window.showWarningMessage(`Reika: ${path} is not a file of this workspace`);
}
