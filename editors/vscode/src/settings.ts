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
  "cacheClass",
  "swaWindow",
  "cacheBlock",
  "checkpointMinStep",
  "maxTokens",
  "minGenTokens",
  "repoMapBudget",
  "reasoningTemplate",
  "reasoningRounds",
  "debug",
  "minimal",
  "warmup",
  "reasoningBack",
  "fetch",
  "bashAllow",
  "sandboxEnv",
  "languageServers",
  "sessionHeaders",
  "parentSessionHeaders",
  "sessionFields",
  "extra",
];

// The settings that widen trust (agent/config's TrustKeys), and
// serverPath, which names the program that runs. A repository can carry a
// .vscode/settings.json, so these are read from the user's settings only
// (package.json gives them "scope": "machine"); a workspace's or folder's
// value is ignored, and the user told once.
export const userOnlySettings = [
  "profile",
  "endpoint",
  "apiKeyEnv",
  "fetch",
  "bashAllow",
  "sandboxEnv",
  "languageServers",
  "serverPath",
];

/** The workspace-level keys already warned of in this activation. */
const warned = new Set<string>();

/**
 * The value of a user-only setting: the user's (globalValue), never a
 * workspace's or a folder's. A key that a workspace sets is named in one
 * warning per activation.
 */
function userValue(config: vscode.WorkspaceConfiguration, key: string, ignored: string[]): unknown {
  const i = config.inspect(key);
  if (i === undefined) {
    return undefined;
  }
  const fromWorkspace = [i.workspaceFolderValue, i.workspaceValue, i.workspaceFolderLanguageValue, i.workspaceLanguageValue];
  if (fromWorkspace.some((v) => v !== undefined) && !warned.has(key)) {
    warned.add(key);
    ignored.push(`reika.${key}`);
  }
  return i.globalValue;
}

function warnIgnored(ignored: string[]): void {
  if (ignored.length === 0) {
    return;
  }
  void vscode.window.showWarningMessage(
    `Reika: this workspace sets ${ignored.join(", ")}, which ${ignored.length === 1 ? "is" : "are"} ignored: ` +
    "settings that widen trust or choose what runs come from your user settings only");
}

/**
 * The settings the user has set, in any scope but for the user-only ones,
 * which come from the user's settings alone. VS Code answers get() with
 * the declared default for an unset key; sending those would override the
 * user's config file, profile and environment, so unset keys stay out.
 */
export function setSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration("reika");
  const out: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const key of serverSettings) {
    if (userOnlySettings.includes(key)) {
      const v = userValue(config, key, ignored);
      if (v !== undefined) {
        out[key] = v;
      }
      continue;
    }
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
  warnIgnored(ignored);
  return out;
}

/** The binary the user's settings name, or "" for reika-lsp on PATH. */
export function serverPathSetting(): string {
  const ignored: string[] = [];
  const v = userValue(vscode.workspace.getConfiguration("reika"), "serverPath", ignored);
  warnIgnored(ignored);
  return typeof v === "string" ? v.trim() : "";
}
