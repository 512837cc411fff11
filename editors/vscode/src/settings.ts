import * as vscode from "vscode";

// The settings the server reads, as VS Code names them (the server takes
// camelCase as well as the config file's snake_case). They mirror
// agent/config/settings.go's table, plus the profile and extra.
export const serverSettings = [
  "endpoint",
  "model",
  "profile",
  "apiKeyEnv",
  "contextWindow",
  "maxTokens",
  "minGenTokens",
  "repoMapBudget",
  "reasoningRounds",
  "debug",
  "minimal",
  "warmup",
  "fetch",
  "bashAllow",
  "extra",
];

/**
 * The settings the user has set, in any scope. VS Code answers get() with
 * the declared default for an unset key; sending those would override the
 * user's config file, profile and environment, so unset keys stay out.
 */
export function setSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration("reika");
  const out: Record<string, unknown> = {};
  for (const key of serverSettings) {
    const i = config.inspect(key);
    if (i === undefined) {
      continue;
    }
    const set = [i.workspaceFolderValue, i.workspaceValue, i.globalValue,
      i.workspaceFolderLanguageValue, i.workspaceLanguageValue, i.globalLanguageValue];
    if (set.some((v) => v !== undefined)) {
      out[key] = config.get(key);
    }
  }
  return out;
}

/** The binary the settings name, or "" for reika-lsp on PATH. */
export function serverPathSetting(): string {
  return vscode.workspace.getConfiguration("reika").get<string>("serverPath", "").trim();
}
