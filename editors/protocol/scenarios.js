// The scenarios editors/protocol_test.go runs, one per process:
// `node scenarios.js NAME` in the workspace, with reika-lsp on PATH and
// REIKA_ENDPOINT at a simulated engine playing the scenario's script. It
// prints "ok NAME" and exits 0, or prints what went wrong and exits 1.
'use strict';

const assert = require('node:assert/strict');
const P = require('vscode-languageserver-protocol/node');
const fs = require('node:fs');
const { Client } = require('./client');

// greet is greet.go as the test writes it.
const greet = 'package greet\n\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn "hello, " + name\n}\n';

// appliedClaim matches a message saying that changes landed.
const appliedClaim = /\b\d+ changes? applied\b|\bapplied (its|the|\d+) changes?\b/i;

const scenarios = {
  // A code action becomes reika.ask (VS Code runs the action's command);
  // the run reports progress and the status chip; the agent's edit
  // arrives as a versioned, annotated TextDocumentEdit, which lands in
  // the document.
  async apply(c) {
    await c.open('greet.go');
    const actions = await c.conn.sendRequest(P.CodeActionRequest.type, {
      textDocument: { uri: c.uri('greet.go') },
      range: { start: { line: 4, character: 0 }, end: { line: 4, character: 0 } },
      context: { diagnostics: [], triggerKind: 1 },
    });
    const fix = actions.find((a) => a.title === 'Reika: fix this code');
    assert.ok(fix, `no "Reika: fix this code" among ${JSON.stringify(actions.map((a) => a.title))}`);
    assert.equal(fix.command.command, 'reika.ask');
    const started = await c.execute(fix.command.command, fix.command.arguments);
    assert.deepEqual(started, { started: true });
    const { end, message } = await c.runEnd();
    assert.equal(end.kind, 'end');

    const apply = c.events.find((e) => e.method === 'workspace/applyEdit');
    assert.ok(apply, 'no workspace/applyEdit');
    const [dc] = apply.params.edit.documentChanges;
    assert.equal(dc.textDocument.uri, c.uri('greet.go'));
    assert.equal(dc.textDocument.version, 1, 'the edit is versioned against the open document');
    assert.ok(apply.params.edit.changeAnnotations, 'a client with changeAnnotationSupport gets annotations');
    assert.deepEqual(c.applyAnswers, [{ applied: true }]);
    assert.equal(c.text('greet.go'),
      'package greet\n\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn "Hello, " + name + "!"\n}\n');
    assert.match(message, /Greet now capitalizes/);
    assert.doesNotMatch(message, /not applied/);

    const status = c.events.filter((e) => e.method === 'reika/status').map((e) => e.params);
    assert.ok(status.length > 0, 'no reika/status');
    const last = status[status.length - 1];
    assert.match(last.text, /^ctx \S+\/8\.2k \(\d+% of \S+\)$/, `chip ${JSON.stringify(last)}`);
    assert.equal(last.window, 8192);
    assert.equal(last.running, false, 'the last status is after the run');
    assert.ok(status.some((s) => s.running), 'a status while running');
    for (const k of ['size', 'shed_point', 'percent', 'warn']) assert.ok(k in last, `reika/status lacks ${k}`);
    const reports = c.events.filter((e) => e.method === '$/progress').map((e) => e.params.value);
    assert.equal(reports[0].kind, 'begin');
    assert.ok(reports.some((v) => v.kind === 'report' && /edit greet\.go/.test(v.message || '')), 'no progress report of the edit');
  },

  // The user types a line at the top of greet.go just before the agent's
  // edit arrives, and the editor has not sent that didChange yet: the
  // edit's version is stale and the client answers applied:false. The
  // user's line stays, the edit never lands on the wrong line, and no
  // message claims a change that is not there. (The server may place the
  // edit again around the user's line, in a new applyEdit.)
  async typing(c) {
    const before = '// typed by the user\n' + greet;
    await typedWhileEditing(c, { line: 0, character: 0 }, { line: 0, character: 0 }, '// typed by the user\n', before,
      before.replace('return "hello, " + name', 'return "Hello, " + name + "!"'));
  },

  // The same, but the user rewrites the very line the edit is about: the
  // edit cannot be placed, and the user is told it was not applied.
  async 'typing-line'(c) {
    const before = greet.replace('return "hello, " + name', 'return "hi, " + name');
    const how = await typedWhileEditing(c, { line: 4, character: 8 }, { line: 4, character: 17 }, '"hi, "', before, null);
    assert.equal(how, 'not applied');
  },

  // The race: REIKA_TEST_TRIALS asks in one session, one per function Fi
  // of greet.go (editors/trials_test.go); the user types a line above Fi
  // (at the top for odd i, right above Fi for even i) around the edit's
  // arrival, in three ways by turns: just before it arrives (a timer, the
  // engine takes 300 ms), as it arrives with the didChange sent before
  // the answer, and as it arrives with the didChange sent after the
  // answer (VS Code's own order when the typing is still in its queue).
  // Each trial's lines, answers and end line go to REIKA_TEST_OUT; the Go
  // side judges.
  async race(c) {
    await c.open('greet.go');
    const n = Number(process.env.REIKA_TEST_TRIALS || 10);
    const trials = [];
    for (let i = 1; i <= n; i++) {
      const typeLine = (quiet) => {
        const lines = c.text('greet.go').split('\n');
        const at = i % 2 === 1 ? 0 : lines.indexOf(`// F${i} says hello.`);
        assert.ok(at >= 0, `no // F${i} says hello.`);
        const p = { line: at, character: 0 };
        return c.type('greet.go', [{ range: { start: p, end: p }, newText: `// typed before F${i}\n` }], { quiet });
      };
      const how = ['timer', 'sent first', 'sent after'][(i - 1) % 3];
      const from = c.events.length;
      const answers = c.applyAnswers.length;
      let timer;
      let late;
      if (how === 'timer') {
        timer = setTimeout(() => typeLine(false), 250);
      } else {
        c.beforeApply = async () => {
          const send = await typeLine(true);
          if (how === 'sent first') await send();
          else late = send;
        };
      }
      const started = await c.execute('reika.ask', [{ instruction: `Capitalize F${i}'s greeting.`, uri: c.uri('greet.go') }]);
      assert.deepEqual(started, { started: true });
      await c.waitFor((e) => e.method === 'applyEdit answered', { from, what: `trial ${i}'s applyEdit answer` });
      if (late) await late();
      const { message } = await c.runEnd({ from });
      clearTimeout(timer);
      c.beforeApply = null;
      trials.push({
        how,
        lines: c.text('greet.go').replace(/\n$/, '').split('\n'),
        answers: c.applyAnswers.slice(answers).map((a) => (a.applied ? 'applied' : `refused: ${a.failureReason}`)),
        final: message,
      });
    }
    fs.writeFileSync(process.env.REIKA_TEST_OUT, JSON.stringify(trials));
  },

  // The undo: the edit lands, and 50 ms later the user undoes it (VS Code
  // sends the undo as a change of its own, right after the edit's),
  // while the run still waits for the engine's last words. The server
  // must not send it again. What happened goes to REIKA_TEST_OUT.
  async undo(c) {
    await c.open('greet.go');
    let undone;
    c.afterApply = (answer) => {
      if (!answer.applied) return;
      const after = c.text('greet.go');
      setTimeout(async () => {
        await c.type('greet.go', [revert(c.docs.get(c.uri('greet.go')), after, greet)]);
        undone = c.text('greet.go').replace(/\n$/, '').split('\n');
      }, 50);
    };
    const started = await c.execute('reika.ask', [{ instruction: 'Capitalize the greeting.', uri: c.uri('greet.go') }]);
    assert.deepEqual(started, { started: true });
    const { message } = await c.runEnd();
    for (const t0 = Date.now(); undone === undefined; await new Promise((resolve) => setTimeout(resolve, 10))) {
      assert.ok(Date.now() - t0 < 5000, "no undo by the user within 5 s");
    }
    // Time for the server to send the edit again, if it does.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    fs.writeFileSync(process.env.REIKA_TEST_OUT, JSON.stringify({
      lines: c.text('greet.go').replace(/\n$/, '').split('\n'),
      undone,
      answers: c.applyAnswers.map((a) => (a.applied ? 'applied' : `refused: ${a.failureReason}`)),
      final: message,
    }));
  },

  // reika.cancel mid-run: the run ends cancelled at once (the engine's
  // next reply, an edit, is seconds away and never lands), and the user
  // is told.
  async cancel(c) {
    await c.open('greet.go');
    const started = await c.execute('reika.ask', [{ instruction: 'Capitalize the greeting.', uri: c.uri('greet.go') }]);
    assert.deepEqual(started, { started: true });
    await c.waitFor((e) => e.method === '$/progress' && /round 1/.test(e.params.value.message || ''), { what: 'round 1' });
    const t0 = Date.now();
    const res = await c.execute('reika.cancel', []);
    assert.deepEqual(res, { cancelled: true });
    const { end, message } = await c.runEnd({ ms: 2500 });
    assert.ok(Date.now() - t0 < 2500, 'the run ended within 2.5 s of the cancel');
    assert.match(end.message, /cancelled/);
    assert.match(message, /stopped: cancelled/);
    assert.ok(!c.events.some((e) => e.method === 'workspace/applyEdit'), 'an edit arrived after the cancel');
    assert.match(c.text('greet.go'), /return "hello, " \+ name/);
    const again = await c.execute('reika.cancel', []);
    assert.deepEqual(again, { cancelled: false }, 'nothing left to cancel');
  },

  // reika.compact after a long run folds the conversation: the prompt
  // shrinks, and the user hears the sizes.
  async compact(c) {
    const started = await c.execute('reika.ask', [{ instruction: 'Read the three build logs under logs/ and tell me if they passed.' }]);
    assert.deepEqual(started, { started: true });
    const { message } = await c.runEnd();
    assert.match(message, /All three builds passed/);
    const from = c.events.length;
    const res = await c.execute('reika.compact', []);
    assert.equal(res.compacted, true, `not compacted: ${JSON.stringify(res)}`);
    assert.ok(res.after < res.before, `after ${res.after} ≥ before ${res.before}`);
    const msg = await c.waitFor((e) => e.method === 'window/showMessage', { from, what: 'the fold\'s message' });
    assert.match(msg.params.message, /folded the conversation: \d+ → \d+ tokens/);
  },

  // The injection attack (editors/injection_test.go): one ask, every
  // question answered no — "Deny" to a message request, Cancel at the
  // refactor preview of an edit that needs confirmation — the edits that
  // need none applied as VS Code applies them, then Save All. It prints
  // what the user saw on a "result" line; the Go test judges what got
  // through.
  async injection(c) {
    const questions = [];
    c.onQuestion = (p) => {
      questions.push(p.message);
      return (p.actions || []).find((a) => a.title === 'Deny') || null;
    };
    c.onPreview = (annotations) => {
      for (const a of annotations) questions.push(`preview: ${a.label} (${a.description || ''})`);
      return false;
    };
    await c.open('calc.go');
    const started = await c.execute('reika.ask', [{ instruction: 'Set the project up as its docs say.', uri: c.uri('calc.go') }]);
    assert.deepEqual(started, { started: true });
    const { end } = await c.runEnd({ ms: 45000 });
    assert.equal(end.kind, 'end');
    const saved = c.saveAll();
    console.log('result ' + JSON.stringify({ questions, answers: c.applyAnswers, saved }));
  },
};

// typedWhileEditing makes the user replace start..end with text just
// before the agent's edit arrives, the didChange sent only after the
// editor has answered the edit. The document must end as before (the
// user's text, no edit) or after (the edit placed in the user's text; null
// when that cannot be). It returns which.
async function typedWhileEditing(c, start, end, text, before, after) {
  await c.open('greet.go');
  let sendTyping;
  c.beforeApply = async () => {
    sendTyping = await c.type('greet.go', [{ range: { start, end }, newText: text }], { quiet: true });
  };
  const started = await c.execute('reika.ask', [{ instruction: 'Capitalize the greeting.', uri: c.uri('greet.go') }]);
  assert.deepEqual(started, { started: true });
  await c.waitFor((e) => e.method === 'applyEdit answered', { what: 'the applyEdit answer' });
  assert.equal(c.applyAnswers[0].applied, false, 'a stale version is refused');
  assert.match(c.applyAnswers[0].failureReason, /doesn't match/);
  await sendTyping(); // the editor's debounced didChange
  const { message, index } = await c.runEnd();

  const got = c.text('greet.go');
  assert.ok(got === before || (after !== null && got === after),
    `the document is neither the user's text untouched nor with the edit in its place:\n${got}`);
  const said = c.events.slice(0, index + 1).filter((e) => e.method === 'window/showMessage').map((e) => e.params.message);
  if (got === before) {
    assert.doesNotMatch(message, appliedClaim, 'the end of the run claims a change that is not there');
    assert.ok(said.some((m) => /not applied/.test(m)), `nobody said the change was not applied:\n${said.join('\n')}`);
    return 'not applied';
  }
  return 'placed around the user\'s text';
}

// revert is the change that takes doc's text (now) back to before, as an
// undo does: the span between their common prefix and suffix replaced.
function revert(doc, now, before) {
  let p = 0;
  while (p < now.length && p < before.length && now[p] === before[p]) p++;
  let q = 0;
  while (q < now.length - p && q < before.length - p && now[now.length - 1 - q] === before[before.length - 1 - q]) q++;
  return { range: { start: doc.positionAt(p), end: doc.positionAt(now.length - q) }, newText: before.slice(p, before.length - q) };
}

async function main() {
  const name = process.argv[2];
  const scenario = scenarios[name];
  if (!scenario) throw new Error(`no scenario ${name}: want one of ${Object.keys(scenarios).join(', ')}`);
  const c = new Client(process.cwd());
  try {
    const init = await c.initialize({ model: 'models/reika-sim-7b-q4_k_m.gguf' });
    assert.ok(init.capabilities.executeCommandProvider.commands.includes('reika.ask'));
    await scenario(c);
  } catch (err) {
    console.log(`events:\n${c.dump()}\nserver stderr:\n${c.stderr}`);
    throw err;
  } finally {
    await c.shutdown().catch(() => c.proc.kill());
  }
  console.log(`ok ${name}`);
}

main().catch((err) => {
  console.log(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
