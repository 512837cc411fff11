import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";
import * as lines from "./lines";
import * as names from "./names";
import { findServer } from "./server";
import { serverPathSetting, setSettings, userOnlySettings } from "./settings";
import { StatusChip } from "./status";

// The extension is a thin client: the server does the work, and the
// extension starts it, passes the settings, offers the commands and shows
// the ctx chip. The server's code actions and its edits (a refactor
// preview, since they carry change annotations that need confirmation)
// come with vscode-languageclient's defaults.

/**
 * The commands the extension contributes, by the server command each runs.
 * Their ids differ from the server's: vscode-languageclient registers the
 * server's own (for the code actions' commands).
 */
export const commandIds: Record<string, string> = {
  [names.cmdAsk]: "reika.vscode.ask",
  [names.cmdCompact]: "reika.vscode.compact",
  [names.cmdCancel]: "reika.vscode.cancel",
  [names.cmdStatus]: "reika.vscode.status",
  [names.cmdSave]: "reika.vscode.save",
  [names.cmdNewSession]: "reika.vscode.newSession",
  [names.cmdResume]: "reika.vscode.resume",
  [names.cmdShowRecap]: "reika.vscode.showRecap",
  [names.cmdUndoRun]: "reika.vscode.undoRun",
};

/** What activate returns: for other extensions, and the end-to-end tests. */
export interface Api {
  /** The running client, if the server started. */
  client(): LanguageClient | undefined;
  /** What the status bar chip shows. */
  chip(): ReturnType<StatusChip["state"]>;
}

let client: LanguageClient | undefined;
let chip: StatusChip;

export async function activate(context: vscode.ExtensionContext): Promise<Api> {
  chip = new StatusChip(commandIds[names.cmdStatus]);
  context.subscriptions.push(chip);

  context.subscriptions.push(
    vscode.commands.registerCommand(commandIds[names.cmdAsk], ask),
    serverCommand(names.cmdCompact, lines.compactLine),
    serverCommand(names.cmdCancel, lines.cancelLine),
    serverCommand(names.cmdStatus, lines.statusLine),
    serverCommand(names.cmdSave, lines.saveLine),
    serverCommand(names.cmdNewSession, lines.newSessionLine),
    serverCommand(names.cmdResume, lines.resumeLine),
    serverCommand(names.cmdShowRecap, lines.recapLine),
    serverCommand(names.cmdUndoRun, lines.undoLine),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      // The server takes a setting that widens trust only at startup (a
      // push of one is ignored): a change of one, or of the binary,
      // restarts it.
      if (userOnlySettings.some((k) => e.affectsConfiguration(`reika.${k}`))) {
        await stop();
        await start();
      } else if (e.affectsConfiguration("reika") && client?.isRunning()) {
        await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { reika: setSettings() } });
      }
    }),
  );

  await start();
  return { client: () => client, chip: () => chip.state() };
}

export async function deactivate(): Promise<void> {
  await stop();
}

async function start(): Promise<void> {
  let command: string;
  try {
    command = findServer(serverPathSetting());
  } catch (err) {
    const why = `Reika: ${(err as Error).message}`;
    chip.failed(why);
    void vscode.window.showErrorMessage(why);
    return;
  }
  const serverOptions: ServerOptions = { command, args: [] };
  const clientOptions: LanguageClientOptions = {
    // Every file: the agent works on the whole project, in any language.
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
    // Only the settings the user has set: the defaults VS Code would fill
    // in must not override the config file, the profile or the environment.
    initializationOptions: () => ({ reika: setSettings() }),
    outputChannelName: "Reika",
  };
  const c = new LanguageClient("reika", "Reika", serverOptions, clientOptions);
  c.onNotification(names.statusNotification, (p: names.StatusParams) => chip.update(p));
  client = c;
  try {
    await c.start();
  } catch (err) {
    client = undefined;
    const why = `Reika: ${command} did not start: ${(err as Error).message}`;
    chip.failed(why);
    void vscode.window.showErrorMessage(why);
  }
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c?.isRunning()) {
    await c.stop();
  }
}

/** Runs a server command and returns its result, or undefined (the user was told) when it failed. */
async function execute<T>(command: string, args: unknown[] = []): Promise<T | undefined> {
  if (client === undefined || !client.isRunning()) {
    void vscode.window.showErrorMessage("Reika: the server is not running (see the Reika output); fix reika.serverPath or run Developer: Reload Window");
    return undefined;
  }
  try {
    return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args })) as T;
  } catch (err) {
    void vscode.window.showErrorMessage(`Reika: ${command} failed: ${(err as Error).message}`);
    return undefined;
  }
}

/** Registers the command that runs a server command and shows its result in one line. */
function serverCommand<T>(command: string, line: (r: T) => string): vscode.Disposable {
  return vscode.commands.registerCommand(commandIds[command], async (): Promise<string | undefined> => {
    const r = await execute<T>(command);
    if (r === undefined || r === null) {
      return undefined;
    }
    const text = line(r);
    vscode.window.setStatusBarMessage(text, 10_000);
    return text;
  });
}

/**
 * Reika: Ask. The instruction comes from an input box, or from the
 * command's argument (a string, or {instruction}) for keybindings; the
 * active editor's file and selection go with it.
 */
async function ask(arg?: string | { instruction?: string }): Promise<names.AskResult | undefined> {
  const editor = vscode.window.activeTextEditor;
  let instruction = typeof arg === "string" ? arg : arg?.instruction;
  if (instruction === undefined) {
    instruction = await vscode.window.showInputBox({
      title: "Reika: Ask",
      prompt: editor ? "What should Reika do? The file and the selection go with it." : "What should Reika do?",
      placeHolder: "add a timeout to the request",
      ignoreFocusOut: true,
    });
  }
  if (instruction === undefined || instruction.trim() === "") {
    return undefined;
  }
  const params: { instruction: string; uri?: string; range?: unknown } = { instruction };
  if (editor && client) {
    params.uri = client.code2ProtocolConverter.asUri(editor.document.uri);
    params.range = client.code2ProtocolConverter.asRange(editor.selection);
  }
  const r = await execute<names.AskResult>(names.cmdAsk, [params]);
  if (r === undefined || r === null) {
    return undefined;
  }
  if (r.started || r.joined || r.queued) {
    vscode.window.setStatusBarMessage(lines.askLine(r), 5_000);
  } else {
    void vscode.window.showWarningMessage(lines.askLine(r));
  }
  return r;
}
