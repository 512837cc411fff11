// The test driver for editors/vscode_test.go. Inside a real VS Code
// (code-server), it plays the scenarios against the Reika extension the
// way a user would — run its commands, type, accept the refactor preview —
// and writes what it saw as JSON lines to $REIKA_DRIVER_OUT; the Go test
// checks them. It does nothing without that variable.
"use strict";
const fs = require("fs");
const path = require("path");
const vscode = require("vscode");

const out = process.env.REIKA_DRIVER_OUT;

function record(obj) {
  fs.appendFileSync(out, JSON.stringify(obj) + "\n");
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, cond, ms = 15000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) {
      return v;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    }
    await sleep(50);
  }
}

// The browser showing this VS Code, through Chromium's DevTools protocol
// ($REIKA_CDP_PORT): the driver types as the user does, keys into the
// focused element, and reads the workbench's DOM.
class Browser {
  static async connect(port) {
    const pages = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    const page = pages.find((p) => p.type === "page");
    if (!page) {
      throw new Error(`no page in Chromium's targets: ${JSON.stringify(pages)}`);
    }
    const ws = new WebSocket(page.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = () => reject(new Error(`cannot reach ${page.webSocketDebuggerUrl}`));
    });
    return new Browser(ws);
  }

  constructor(ws) {
    this.ws = ws;
    this.id = 0;
    this.pending = new Map();
    ws.onmessage = (e) => {
      const m = JSON.parse(e.data);
      const p = this.pending.get(m.id);
      if (p) {
        this.pending.delete(m.id);
        m.error ? p.reject(new Error(JSON.stringify(m.error))) : p.resolve(m.result);
      }
    };
  }

  send(method, params = {}) {
    const id = ++this.id;
    this.ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  async type(text) {
    await this.send("Input.insertText", { text });
  }

  async enter() {
    const key = { key: "Enter", code: "Enter", windowsVirtualKeyCode: 13, nativeVirtualKeyCode: 13 };
    await this.send("Input.dispatchKeyEvent", { type: "rawKeyDown", ...key });
    await this.send("Input.dispatchKeyEvent", { type: "char", text: "\r", ...key });
    await this.send("Input.dispatchKeyEvent", { type: "keyUp", ...key });
  }

  async evaluate(expression) {
    const r = await this.send("Runtime.evaluate", { expression, returnByValue: true });
    return r.result.value;
  }

  // The text of the status bar items, as the user sees them.
  statusBar() {
    return this.evaluate(`[...document.querySelectorAll(".statusbar-item")].map((e) => ({ id: e.id, text: e.innerText.trim(), classes: e.className }))`);
  }

  // The focused element: what typing goes into.
  focused() {
    return this.evaluate(`(() => { const e = document.activeElement; return e ? e.tagName + "." + e.className : ""; })()`);
  }
}

function activate() {
  if (!out) {
    return;
  }
  run().then(
    () => record({ done: true }),
    (err) => {
      const api = vscode.extensions.getExtension("reika-lsp.reika").exports;
      record({ error: String((err && err.stack) || err), chip: api && api.chip(), done: true });
    },
  );
}

async function run() {
  const ext = vscode.extensions.getExtension("reika-lsp.reika");
  const api = await ext.activate();
  const client = await waitFor("the client to run", () => {
    const c = api.client();
    return c && c.isRunning() && c;
  });
  const root = vscode.workspace.workspaceFolders[0].uri;
  const browser = await Browser.connect(process.env.REIKA_CDP_PORT);

  // The server's messages, as the user sees them (and shown as usual).
  const messages = [];
  // The order of messages and progress, to find a run's end: the progress
  // ends, then the closing message comes.
  const events = [];
  const ended = (from) => {
    const end = events.indexOf("end", from);
    return end >= 0 && events.indexOf("message", end) > end;
  };
  client.onNotification("window/showMessage", (m) => {
    messages.push(m.message);
    events.push("message");
    void vscode.window.showInformationMessage(m.message);
  });

  // applyEdit: record what came; for the typing scenario, type a line at
  // the top of the buffer first; then let the real handler run, and
  // accept the refactor preview it opens as a user would.
  const edits = [];
  let typeFirst; // {uri, text}: insert text at the top of uri before the edit
  client.clientOptions.middleware.workspace = {
    ...client.clientOptions.middleware.workspace,
    handleApplyEdit: async (params, next) => {
      const rec = {
        label: params.label,
        annotated: Object.values(params.edit.changeAnnotations || {}).some((a) => a.needsConfirmation),
        versioned: (params.edit.documentChanges || []).every((c) => !c.textDocument || typeof c.textDocument.version === "number"),
      };
      edits.push(rec);
      if (typeFirst) {
        const t = typeFirst;
        typeFirst = undefined;
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === t.uri.toString());
        const we = new vscode.WorkspaceEdit();
        we.insert(doc.uri, new vscode.Position(0, 0), t.text);
        rec.typed = await vscode.workspace.applyEdit(we);
      }
      // The refactor preview lists edits that need confirmation
      // unticked: the user ticks them, then presses Apply.
      let settled = false;
      const result = Promise.resolve(next(params)).finally(() => (settled = true));
      await sleep(300);
      rec.waitedForPreview = !settled;
      rec.log = [];
      while (!settled) {
        const state = await browser.evaluate(`(() => {
          const boxes = [...document.querySelectorAll(".bulk-edit-panel .edit-checkbox")];
          if (boxes.length === 0) return "no preview";
          const off = boxes.find((b) => !b.classList.contains("checked"));
          if (off) { off.click(); return "ticked"; }
          return "all ticked";
        })()`);
        if (rec.log[rec.log.length - 1] !== state) {
          rec.log.push(state);
        }
        if (state === "all ticked") {
          rec.previewShown = true;
          await vscode.commands.executeCommand("refactorPreview.apply");
        }
        await sleep(100);
      }
      rec.result = await result;
      return rec.result;
    },
  };

  // $/progress, as the client shows it.
  const progress = [];
  client.clientOptions.middleware.handleWorkDoneProgress = (token, params, next) => {
    progress.push(params);
    events.push(params.kind);
    next(token, params);
  };

  async function open(name) {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(root, name));
    return vscode.window.showTextDocument(doc);
  }
  function select(editor, needle) {
    const text = editor.document.getText();
    const at = text.indexOf(needle);
    if (at < 0) {
      throw new Error(`${needle} is not in ${editor.document.fileName}`);
    }
    editor.selection = new vscode.Selection(editor.document.positionAt(at), editor.document.positionAt(at + needle.length));
  }
  // ask runs Reika: Ask as a user would (the input box) and waits for the
  // run's closing message.
  async function ask(instruction, viaInputBox) {
    const before = messages.length;
    const from = events.length;
    let result;
    if (viaInputBox) {
      const pending = vscode.commands.executeCommand("reika.vscode.ask");
      await waitFor("the input box to have the focus", async () => /input/i.test(await browser.focused()), 5000);
      await browser.type(instruction);
      await browser.enter();
      result = await Promise.race([pending, sleep(5000).then(() => "the input box did not take the instruction")]);
    } else {
      result = await vscode.commands.executeCommand("reika.vscode.ask", instruction);
    }
    if (!result || !result.started) {
      return { result, messages: messages.slice(before) };
    }
    await waitFor("the run's closing message", () => ended(from));
    return { result, messages: messages.slice(before) };
  }

  // 1. Ask: the edit lands in the buffer, through the refactor preview.
  let ed = await open("greet.go");
  select(ed, 'return "hello, " + name');
  let a = await ask("Capitalize the greeting.", true);
  await sleep(300);
  // The chip as the status bar shows it (the DOM), once it has caught up.
  let statusBar;
  await waitFor("the chip in the status bar", async () => {
    statusBar = await browser.statusBar();
    return statusBar.some((i) => i.text === api.chip().text);
  }, 5000).catch(() => {});
  record({ scenario: "ask", ask: a, edits: edits.splice(0), text: ed.document.getText(), chip: api.chip(), statusBar });

  // 2. The user types above the target just before the edit arrives.
  ed = await open("answer.go");
  select(ed, "return 41");
  typeFirst = { uri: ed.document.uri, text: "// typed by the user\n" };
  a = await ask("Make it 42.", false);
  await sleep(300);
  record({ scenario: "typing", ask: a, edits: edits.splice(0), text: ed.document.getText() });

  // 3. Cancel mid-run.
  ed = await open("main.go");
  select(ed, 'println("hi")');
  const before = messages.length;
  const from = events.length;
  progress.length = 0;
  const started = await vscode.commands.executeCommand("reika.vscode.ask", "Explain this.");
  await waitFor("the run's first round", () => progress.some((p) => p.kind === "report" && /^round 1\b/.test(p.message || "")));
  // The request to the engine goes out as the round starts, and its
  // answer streams for seconds; the Go test checks in the engine's log
  // that the cancel cut the stream.
  await sleep(1000);
  const cancelLine = await vscode.commands.executeCommand("reika.vscode.cancel");
  await waitFor("the run's closing message", () => ended(from));
  record({ scenario: "cancel", started, cancelLine, messages: messages.slice(before), progress: progress.slice(), edits: edits.splice(0), text: ed.document.getText() });

  // 4. Compact, then Status.
  const compactLine = await vscode.commands.executeCommand("reika.vscode.compact");
  const statusLine = await vscode.commands.executeCommand("reika.vscode.status");
  record({ scenario: "compact", compactLine, statusLine, chip: api.chip() });

  // 5. A setting changed while the server runs reaches it: the next run
  // works in the new window.
  await vscode.workspace.getConfiguration("reika").update("contextWindow", 12288, vscode.ConfigurationTarget.Global);
  a = await ask("Anything else?", false);
  record({ scenario: "settings", ask: a, chip: api.chip() });
}

module.exports = { activate, deactivate() {} };
