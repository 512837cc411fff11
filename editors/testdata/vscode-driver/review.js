// The review's and the panel's scenarios of the test driver
// (extension.js): TestVSCodeReview and TestVSCodeQuestion
// (editors/vscode_review_test.go).
"use strict";
const vscode = require("vscode");
const { record, waitFor, startClient, watch } = require("./extension");

// lensLines reads where each Keep CodeLens sits in the editor showing
// uri, as the user sees it: the number of the line right below it (1-based),
// from the positions VS Code drew them at.
function lensLines(browser) {
  return browser.evaluate(`(() => {
    const out = [];
    for (const a of document.querySelectorAll(".codelens-decoration a")) {
      if (!a.innerText.includes("Keep") || a.innerText.includes("all")) continue;
      const editor = a.closest(".monaco-editor");
      const bottom = a.closest(".codelens-decoration").getBoundingClientRect().bottom;
      let best;
      for (const n of editor.querySelectorAll(".line-numbers")) {
        const top = n.getBoundingClientRect().top;
        if (top >= bottom - 2 && (!best || top < best.top)) best = { top, line: Number(n.innerText.trim()) };
      }
      out.push(best ? best.line : -1);
    }
    return out;
  })()`);
}

// The review (TestVSCodeReview): one run edits greet.go, then writes .env
// (a protected path: VS Code's refactor preview asks), then answers in
// Markdown. The driver times the Keep · Undo CodeLens from the edit's
// landing, reads the panel and the notification while the preview waits,
// discards the protected change, then edits greet.go as a user does:
// lines typed above the change (the lens moves down with it), then the
// changed line itself (the change leaves the review, the lens goes).
async function runReview() {
  const { api, client, browser, root } = await startClient();
  const w = watch(client);
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(root, "greet.go"));
  const ed = await vscode.window.showTextDocument(doc);
  const at = doc.getText().indexOf('return "hello, " + name');
  ed.selection = new vscode.Selection(doc.positionAt(at), doc.positionAt(at));
  const timed = async (what, cond, ms) => {
    const t0 = Date.now();
    const v = await waitFor(what, cond, ms).catch(() => undefined);
    return { ms: Date.now() - t0, ok: v !== undefined, value: v };
  };
  let landed;
  w.onApplied = () => { if (!landed) landed = Date.now(); };
  const reviewApply = client.clientOptions.middleware.workspace.handleApplyEdit;
  let waiting;
  let waited;
  client.clientOptions.middleware.workspace = {
    ...client.clientOptions.middleware.workspace,
    handleApplyEdit: async (params, next) => {
      const confirm = Object.values(params.edit.changeAnnotations || {}).some((a) => a.needsConfirmation);
      if (!confirm) {
        return reviewApply(params, next);
      }
      const result = reviewApply(params, next);
      waiting = (async () => {
        // While the preview waits: the panel's header and the notification.
        const state = await timed("the panel to say it waits for the answer", () => {
          const c = api.conversation();
          return c.waiting && c;
        }, 10000);
        const note = await timed("the notification naming the protected path", async () => {
          const texts = await browser.evaluate(`[...document.querySelectorAll(".notification-toast, .notifications-center .notification-list-item")].map((e) => e.innerText)`);
          return texts.find((t) => /protected/i.test(t) && t.includes(".env"));
        }, 10000);
        await browser.screenshot("vscode-panel-waiting.png");
        waited = { panel: state.value ? { waiting: state.value.waiting, header: state.value.header } : undefined, panelMs: state.ms, notification: note.value || "" };
        await vscode.commands.executeCommand("refactorPreview.discard");
      })();
      return result;
    },
  };
  const started = await vscode.commands.executeCommand("reika.vscode.ask", "Capitalize the greeting and add a token to .env.");
  if (!started || !started.started) {
    throw new Error(`Reika: Ask = ${JSON.stringify(started)}`);
  }
  await waitFor("the edit to land", () => landed, 20000);
  const lensShown = await timed("the Keep · Undo CodeLens", async () => {
    const l = await lensLines(browser);
    return l.length > 0 && l;
  }, 15000);
  lensShown.ms = Date.now() - landed;
  const final = await waitFor("the closing message", () => w.closing(0), 30000);
  await waitFor("the protected change's preview", () => waiting, 5000).catch(() => {});
  await waiting;
  await waitFor("the panel to render the answer", () => {
    const c = api.conversation();
    return c.rendered && c.rendered.turns.length > 0 && c.rendered.turns[0].answered;
  }, 10000).catch(() => {});
  await browser.screenshot("vscode-panel.png");
  const panel = api.conversation();
  // The user types two lines above the change: the lens moves down by two.
  await ed.edit((b) => b.insert(new vscode.Position(0, 0), "// typed 1\n// typed 2\n"));
  const lensMoved = await timed("the CodeLens to move down with the change", async () => {
    const l = await lensLines(browser);
    return l.length === 1 && l[0] === 7 && l;
  }, 15000);
  // The user rewrites the changed line: the change leaves the review.
  const line = doc.lineAt(6);
  await ed.edit((b) => b.replace(line.range, '\treturn "Hi, " + name'));
  const lensGone = await timed("the CodeLens to go", async () => (await lensLines(browser)).length === 0, 15000);
  record({ scenario: "review", result: { final, lens: { shown: lensShown, moved: lensMoved, gone: lensGone, },
    waited, conversation: panel, review: api.review(), text: doc.getText() } });
}

// The question (TestVSCodeQuestion): the run asks to run a command
// outside the sandbox (window/showMessageRequest); while the notification
// waits, the panel's header says the run waits for the user's answer and
// the run shows the question; the user clicks Deny in the notification,
// and the panel no longer waits.
async function runQuestion() {
  const { api, client, browser } = await startClient();
  const w = watch(client);
  const started = await vscode.commands.executeCommand("reika.vscode.ask", "Run the deploy.");
  if (!started || !started.started) {
    throw new Error(`Reika: Ask = ${JSON.stringify(started)}`);
  }
  const waiting = await waitFor("the panel to wait for the answer", () => {
    const c = api.conversation();
    return c.waiting && c.rendered && /waiting for your answer/i.test(c.rendered.header) && c;
  }, 15000);
  const clicked = await waitFor("a Deny button to click", () => browser.evaluate(`(() => {
    const b = [...document.querySelectorAll(".notification-toast .monaco-button, .notifications-center .monaco-button")].find((b) => b.innerText.trim() === "Deny");
    if (!b) return false;
    b.click();
    return true;
  })()`), 10000);
  const answered = await waitFor("the panel to stop waiting", () => {
    const c = api.conversation();
    return !c.waiting && c.rendered && !/waiting/i.test(c.rendered.header) && c;
  }, 10000);
  const final = await waitFor("the closing message", () => w.closing(0), 20000);
  record({ scenario: "question", result: { waiting: { waiting: waiting.waiting, header: waiting.rendered.header }, clicked, answered: { header: answered.rendered.header }, final } });
}

module.exports = { runReview, runQuestion };
