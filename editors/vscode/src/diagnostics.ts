import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";

// The editor's own diagnostics go with an ask (reika.ask's diagnostics):
// the errors and warnings VS Code shows in the workspace's files, from
// every language server and linter the user runs, so that the model sees
// what the user sees. The server keeps at most as many as this sends.

/** The most diagnostics an ask carries, errors first (the server's tools.MaxEditorDiagnostics). */
export const maxDiagnostics = 50;

/** One file's diagnostics, as textDocument/publishDiagnostics gives them. */
export interface FileDiagnostics {
  uri: string;
  diagnostics: { range: unknown; severity: number; message: string; source?: string }[];
}

/**
 * The errors and warnings VS Code shows now in the workspace's files,
 * errors first, at most maxDiagnostics, grouped by file.
 */
export function workspaceDiagnostics(client: LanguageClient): FileDiagnostics[] {
  const all = vscode.languages.getDiagnostics().filter(([uri]) => uri.scheme === "file" && vscode.workspace.getWorkspaceFolder(uri) !== undefined);
  const byFile = new Map<string, FileDiagnostics>();
  let n = 0;
  for (const [severity, lsp] of [[vscode.DiagnosticSeverity.Error, 1], [vscode.DiagnosticSeverity.Warning, 2]]) {
    for (const [uri, diags] of all) {
      for (const d of diags) {
        if (d.severity !== severity || n === maxDiagnostics) {
          continue;
        }
        const key = uri.toString();
        let f = byFile.get(key);
        if (!f) {
          f = { uri: client.code2ProtocolConverter.asUri(uri), diagnostics: [] };
          byFile.set(key, f);
        }
        f.diagnostics.push({ range: client.code2ProtocolConverter.asRange(d.range), severity: lsp, message: d.message, source: d.source });
        n++;
      }
    }
  }
  return [...byFile.values()];
}
