import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  ShowMessageRequest,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";
import { FileDiagnostics, workspaceDiagnostics } from "./diagnostics";
import * as lines from "./lines";
import * as names from "./names";
import { Conversation } from "./conversation";
import { confirmed, openPath, question } from "./waiting";
import { Review } from "./review";
import { findServer, installCommand, isCheckout, NotFound } from "./server";
import { serverPathSetting, setSettings, userOnlySettings } from "./settings";
import { StatusChip } from "./status";

// The extension is a thin client: the server does the work, and the
// extension starts it (finding it where `go install` puts it, or offering
// to install it), passes the settings, offers the commands, shows the ctx
// chip and the conversation (conversation.ts), and lets the user keep or
// undo each change the server applied (review.ts). The server's code
// actions come with vscode-languageclient's defaults.

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

/** Reika: Plan, which runs the server's ask in the plan mode. */
export const planCommand = "reika.vscode.plan";

/** The extension's own commands, which run no server command. */
export const ownCommands = {
  conversation: "reika.vscode.conversation",
  keepAll: "reika.vscode.keepAll",
  undoAll: "reika.vscode.undoAll",
  keepFile: "reika.vscode.keepFile",
  undoFile: "reika.vscode.undoFile",
  keepChange: "reika.vscode.keepChange",
  undoChange: "reika.vscode.undoChange",
  installServer: "reika.vscode.installServer",
};

/** What activate returns: for other extensions, and the end-to-end tests. */
export interface Api {
  /** The running client, if the server started. */
  client(): LanguageClient | undefined;
  /** What the status bar chip shows. */
  chip(): ReturnType<StatusChip["state"]>;
  /** The conversation panel's runs. */
  conversation(): ReturnType<Conversation["state"]>;
  /** The applied changes under review. */
  review(): ReturnType<Review["list"]>;
  /** The binary the server runs from, once found. */
  serverPath(): string | undefined;
}

let client: LanguageClient | undefined;
let chip: StatusChip;
let conversation: Conversation;
let review: Review;
let extensionDir: string;
let serverPath: string | undefined;
/** The status bar's "working on it" of the last ask: gone when its run ends. */
let askMessage: vscode.Disposable | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<Api> {
  extensionDir = context.extensionPath;
  chip = new StatusChip(ownCommands.conversation);
  conversation = new Conversation((instruction) => void ask({ instruction, fromPanel: true }), openPath);
  review = new Review({ keep: ownCommands.keepChange, undo: ownCommands.undoChange, keepFile: ownCommands.keepFile, undoFile: ownCommands.undoFile });
  review.onDidRecord((changes) => conversation.edited(changes.map((c) => ({
    uri: c.uri, name: vscode.workspace.asRelativePath(vscode.Uri.parse(c.uri)), line: c.line,
  }))));
  context.subscriptions.push(chip, conversation, review);

  context.subscriptions.push(
    vscode.commands.registerCommand(commandIds[names.cmdAsk], (arg) => ask(arg)),
    vscode.commands.registerCommand(planCommand, (arg) => ask(arg, names.trustPlan)),
    serverCommand(names.cmdCompact, lines.compactLine),
    serverCommand(names.cmdCancel, lines.cancelLine),
    serverCommand(names.cmdStatus, lines.statusLine),
    serverCommand(names.cmdSave, lines.saveLine),
    serverCommand(names.cmdNewSession, lines.newSessionLine),
    serverCommand(names.cmdResume, lines.resumeLine),
    serverCommand(names.cmdShowRecap, lines.recapLine),
    serverCommand(names.cmdUndoRun, lines.undoLine),
    vscode.commands.registerCommand(ownCommands.conversation, () => conversation.focusInput()),
    vscode.commands.registerCommand(ownCommands.keepAll, () => review.keep(() => true)),
    vscode.commands.registerCommand(ownCommands.undoAll, () => review.undo(() => true)),
    vscode.commands.registerCommand(ownCommands.installServer, installServer),
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
  return {
    client: () => client,
    chip: () => chip.state(),
    conversation: () => conversation.state(),
    review: () => review.list(),
    serverPath: () => serverPath,
  };
}

export async function deactivate(): Promise<void> {
  await stop();
}

async function start(): Promise<void> {
  let command: string;
  try {
    command = findServer(serverPathSetting(), { extensionDir });
  } catch (err) {
    const why = `Reika: ${(err as Error).message}`;
    if (err instanceof NotFound) {
      chip.missing("Reika: reika-lsp was not found", ownCommands.installServer);
      void offerInstall(why);
      return;
    }
    chip.failed(why);
    void vscode.window.showErrorMessage(why);
    return;
  }
  serverPath = command;
  const serverOptions: ServerOptions = { command, args: [] };
  const clientOptions: LanguageClientOptions = {
    // Every file: the agent works on the whole project, in any language.
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
    // Only the settings the user has set: the defaults VS Code would fill
    // in must not override the config file, the profile or the environment.
    initializationOptions: () => ({ reika: setSettings() }),
    outputChannelName: "Reika",
    middleware: {
      // Each applied change goes under review (Keep · Undo); one that
      // waits in the refactor preview is said to wait, and why.
      workspace: { handleApplyEdit: confirmed(review.handleApplyEdit, conversation) },
      // The run's progress streams into the conversation too.
      handleWorkDoneProgress: (token, params, next) => {
        if (params.kind === "begin" && params.title === "Reika") {
          conversation.begin(params.message ?? "");
        } else if (params.kind === "report" && params.message) {
          conversation.progress(params.message);
        } else if (params.kind === "end") {
          askMessage?.dispose();
          conversation.ended(params.message ?? "");
        }
        next(token, params);
      },
    },
  };
  const c = new LanguageClient("reika", "Reika", serverOptions, clientOptions);
  c.onNotification(names.statusNotification, (p: names.StatusParams) => {
    chip.update(p);
    conversation.status(p);
  });
  // A question of the server's (a command to allow, a URL to fetch) is
  // shown as vscode-languageclient shows it, and the panel says that it
  // waits for the user's answer until there is one.
  c.onRequest(ShowMessageRequest.type, (p) => question(p, conversation));
  c.onNotification(names.answerNotification, (p: names.AnswerParams) => conversation.answer(p));
  // The panel shows each answer whole: no answer document on top of it.
  c.registerFeature({
    fillClientCapabilities: (caps) => {
      caps.experimental = { ...(caps.experimental as object | undefined), [names.answersCapability]: true };
    },
    initialize: () => {},
    getState: () => ({ kind: "static" }),
    clear: () => {},
  });
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
 * Reika: Ask, and with trust names.trustPlan Reika: Plan (read-only, the
 * answer a numbered plan). The instruction comes from an input box, or
 * from the command's argument (a string, or {instruction}) for
 * keybindings; the active editor's file and selection go with it, and
 * the errors and warnings VS Code shows in the workspace (diagnostics.ts).
 */
async function ask(arg?: string | { instruction?: string; fromPanel?: boolean }, trust?: string): Promise<names.AskResult | undefined> {
  const editor = vscode.window.activeTextEditor;
  const fromPanel = typeof arg === "object" && arg.fromPanel === true;
  let instruction = typeof arg === "string" ? arg : arg?.instruction;
  if (instruction === undefined) {
    instruction = await vscode.window.showInputBox({
      title: trust === names.trustPlan ? "Reika: Plan" : "Reika: Ask",
      prompt: trust === names.trustPlan
        ? "What should Reika plan? It only reads, and answers with a numbered plan."
        : editor ? "What should Reika do? The file and the selection go with it." : "What should Reika do?",
      placeHolder: "add a timeout to the request",
      ignoreFocusOut: true,
    });
  }
  if (instruction === undefined || instruction.trim() === "") {
    return undefined;
  }
  const params: { instruction: string; uri?: string; range?: unknown; trust?: string; diagnostics?: FileDiagnostics[] } = { instruction };
  if (trust !== undefined) {
    params.trust = trust;
  }
  if (editor && client && !fromPanel) {
    params.uri = client.code2ProtocolConverter.asUri(editor.document.uri);
    params.range = client.code2ProtocolConverter.asRange(editor.selection);
  }
  if (client) {
    params.diagnostics = workspaceDiagnostics(client);
  }
  // The panel shows the run without taking the keyboard: the user goes on
  // typing in the editor they asked from.
  conversation.show();
  conversation.start(instruction);
  const r = await execute<names.AskResult>(names.cmdAsk, [params]);
  if (r === undefined || r === null) {
    conversation.ended("the server did not take it");
    return undefined;
  }
  if (!r.started && !r.joined && !r.queued) {
    conversation.ended(lines.askLine(r));
  }
  if (r.started || r.joined || r.queued) {
    askMessage?.dispose();
    askMessage = vscode.window.setStatusBarMessage(lines.askLine(r), 5_000);
  } else {
    void vscode.window.showWarningMessage(lines.askLine(r));
  }
  return r;
}

/** Says that no server was found and offers to install it. */
async function offerInstall(why: string): Promise<void> {
  const install = "Install from a clone";
  const set = "Set reika.serverPath";
  const pick = await vscode.window.showWarningMessage(why, install, set);
  if (pick === install) {
    await installServer();
  } else if (pick === set) {
    await vscode.commands.executeCommand("workbench.action.openSettings", "reika.serverPath");
  }
}

/**
 * The clone of Reika to install from: the workspace folder that is one,
 * else the folder the user picks; undefined when the user gave none.
 */
async function pickCheckout(): Promise<string | undefined> {
  const open = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath).find(isCheckout);
  if (open) {
    return open;
  }
  const picked = await vscode.window.showOpenDialog({
    canSelectFolders: true,
    canSelectFiles: false,
    canSelectMany: false,
    openLabel: "Install from this clone",
    title: "Reika: the folder of your clone of Reika (the module is not published: the server installs from a clone)",
  });
  const dir = picked?.[0]?.fsPath;
  if (dir && !isCheckout(dir)) {
    void vscode.window.showErrorMessage(`Reika: ${dir} is not a clone of Reika (no go.mod of github.com/reika-lsp/reika with cmd/reika-lsp): clone the repository, then pick its folder.`);
    return undefined;
  }
  return dir;
}

/**
 * Reika: Install the server: in a clone of Reika (the module is not
 * published), with the user's yes, runs go install ./cmd/reika-lsp in a
 * terminal (a task, so the user sees it), then starts the server.
 */
async function installServer(): Promise<void> {
  const dir = await pickCheckout();
  if (!dir) {
    return;
  }
  const yes = "Install";
  const pick = await vscode.window.showInformationMessage(`Reika: run ${installCommand} in ${dir}?`, { modal: true, detail: "The module is not published, so the server installs from your clone. It needs Go (go.dev/dl) and a C compiler (cgo); the binary lands in $(go env GOPATH)/bin, where Reika looks for it." }, yes);
  if (pick !== yes) {
    return;
  }
  const task = new vscode.Task({ type: "shell", reika: "install" }, vscode.TaskScope.Global, "install reika-lsp", "Reika", new vscode.ShellExecution(installCommand, { cwd: dir }));
  const ended = new Promise<number | undefined>((resolve) => {
    const d = vscode.tasks.onDidEndTaskProcess((e) => {
      if (e.execution.task.name === task.name && e.execution.task.source === task.source) {
        d.dispose();
        resolve(e.exitCode);
      }
    });
  });
  await vscode.tasks.executeTask(task);
  const code = await ended;
  if (code !== 0) {
    void vscode.window.showErrorMessage(`Reika: ${installCommand} in ${dir} failed (exit ${code}): see the terminal; are Go and a C compiler installed?`);
    return;
  }
  await stop();
  await start();
}
