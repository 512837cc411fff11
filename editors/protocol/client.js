// A client built on VS Code's own protocol library: it starts reika-lsp
// over stdio with the capabilities VS Code advertises, keeps its open
// documents as TextDocuments, and answers workspace/applyEdit as
// vscode-languageclient does (a stale version is refused with
// applied:false). It records what the server sends so that scenarios can
// wait for it.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');
const { pathToFileURL, fileURLToPath } = require('node:url');
const P = require('vscode-languageserver-protocol/node');
const { TextDocument } = require('vscode-languageserver-textdocument');

// VS Code's client capabilities, as far as Reika can use them.
const capabilities = {
  general: { positionEncodings: ['utf-16'], markdown: { parser: 'marked', version: '1.1.0' } },
  workspace: {
    applyEdit: true,
    workspaceEdit: {
      documentChanges: true,
      resourceOperations: ['create', 'rename', 'delete'],
      failureHandling: 'textOnlyTransactional',
      normalizesLineEndings: true,
      changeAnnotationSupport: { groupsOnLabel: true },
    },
    didChangeConfiguration: { dynamicRegistration: true },
    executeCommand: { dynamicRegistration: true },
    configuration: true,
    workspaceFolders: true,
  },
  textDocument: {
    synchronization: { dynamicRegistration: true, willSave: true, willSaveWaitUntil: true, didSave: true },
    codeAction: {
      dynamicRegistration: true,
      isPreferredSupport: true,
      disabledSupport: true,
      dataSupport: true,
      honorsChangeAnnotations: true,
      resolveSupport: { properties: ['edit'] },
      codeActionLiteralSupport: {
        codeActionKind: {
          valueSet: ['', 'quickfix', 'refactor', 'refactor.extract', 'refactor.inline', 'refactor.rewrite',
            'source', 'source.organizeImports'],
        },
      },
    },
  },
  window: {
    workDoneProgress: true,
    showMessage: { messageActionItem: { additionalPropertiesSupport: true } },
    showDocument: { support: true },
  },
};

class Client {
  // root is the workspace folder; the server is `reika-lsp` from PATH.
  constructor(root) {
    this.root = root;
    this.docs = new Map(); // uri → TextDocument
    this.events = []; // {method, params} in arrival order
    this.waiters = [];
    // beforeApply, when set, runs when workspace/applyEdit arrives, before
    // the edit is applied: the user typing while the edit is on its way.
    this.beforeApply = null;
    // afterApply, when set, runs with the answer once the edit is applied
    // and answered: the user acting right after it landed.
    this.afterApply = null;
    this.applyAnswers = [];
    this.dirty = new Set(); // uris of documents an edit changed, unsaved
    // onQuestion, when set, answers window/showMessageRequest (the user);
    // else the prompt is closed unanswered.
    this.onQuestion = null;
    // onPreview, when set, is the user at VS Code's refactor preview: it
    // gets the change annotations that need confirmation and returns true
    // to apply the edit, false to cancel it (applied:false); unset, every
    // preview is accepted.
    this.onPreview = null;
    this.proc = spawn('reika-lsp', [], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    this.stderr = '';
    this.proc.stderr.on('data', (b) => { this.stderr += b; });
    this.conn = P.createProtocolConnection(
      new P.StreamMessageReader(this.proc.stdout), new P.StreamMessageWriter(this.proc.stdin));
    this.handle();
    this.conn.listen();
  }

  uri(name) { return pathToFileURL(path.join(this.root, name)).href; }

  record(method, params) {
    this.events.push({ method, params });
    for (const w of this.waiters.slice()) w();
  }

  // handle registers every handler before listen(), as vscode-jsonrpc
  // requires. $/progress reaches only conn.onProgress, per token.
  handle() {
    const c = this.conn;
    c.onNotification(P.ShowMessageNotification.type, (p) => this.record('window/showMessage', p));
    c.onNotification(P.LogMessageNotification.type, (p) => this.record('window/logMessage', p));
    c.onNotification('reika/status', (p) => this.record('reika/status', p));
    c.onNotification((method, p) => this.record(method, p));
    c.onRequest(P.WorkDoneProgressCreateRequest.type, (p) => {
      this.record('window/workDoneProgress/create', p);
      c.onProgress(P.WorkDoneProgress.type, p.token, (v) => this.record('$/progress', { token: p.token, value: v }));
      return null;
    });
    c.onRequest(P.ApplyWorkspaceEditRequest.type, async (p) => {
      this.record('workspace/applyEdit', p);
      if (this.beforeApply) {
        const f = this.beforeApply;
        this.beforeApply = null;
    // afterApply, when set, runs with the answer once the edit is applied
    // and answered: the user acting right after it landed.
    this.afterApply = null;
        await f();
      }
      const answer = this.applyWorkspaceEdit(p.edit);
      this.applyAnswers.push(answer);
      this.record('applyEdit answered', answer);
      if (this.afterApply) {
        const f = this.afterApply;
        this.afterApply = null;
        f(answer);
      }
      return answer;
    });
    c.onRequest(P.ShowDocumentRequest.type, (p) => { this.record('window/showDocument', p); return { success: true }; });
    c.onRequest(P.ShowMessageRequest.type, (p) => {
      this.record('window/showMessageRequest', p);
      return this.onQuestion ? this.onQuestion(p) : null;
    });
    c.onRequest(P.ConfigurationRequest.type, (p) => p.items.map(() => null));
    c.onRequest(P.RegistrationRequest.type, () => null);
    c.onRequest(P.UnregistrationRequest.type, () => null);
    c.onRequest((method, p) => { this.record(method, p); return null; });
  }

  async initialize(initializationOptions) {
    const result = await this.conn.sendRequest(P.InitializeRequest.type, {
      processId: process.pid,
      clientInfo: { name: 'Visual Studio Code', version: '1.99.0' },
      locale: 'en',
      rootUri: pathToFileURL(this.root).href,
      rootPath: this.root,
      capabilities,
      initializationOptions,
      workspaceFolders: [{ uri: pathToFileURL(this.root).href, name: path.basename(this.root) }],
    });
    await this.conn.sendNotification(P.InitializedNotification.type, {});
    this.serverCapabilities = result.capabilities;
    return result;
  }

  async open(name) {
    const uri = this.uri(name);
    const text = fs.readFileSync(path.join(this.root, name), 'utf8');
    const doc = TextDocument.create(uri, 'go', 1, text);
    this.docs.set(uri, doc);
    await this.conn.sendNotification(P.DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: 'go', version: 1, text },
    });
    return doc;
  }

  text(name) { return this.docs.get(this.uri(name)).getText(); }

  // type changes a document as the user's typing does; the didChange is
  // sent unless quiet (the editor has not sent it yet), and then returned
  // so the caller can send it later.
  async type(name, edits, { quiet = false } = {}) {
    const uri = this.uri(name);
    const doc = this.docs.get(uri);
    const changes = incremental(doc, edits);
    const next = TextDocument.update(doc, changes, doc.version + 1);
    this.docs.set(uri, next);
    const params = { textDocument: { uri, version: next.version }, contentChanges: changes };
    const send = () => this.conn.sendNotification(P.DidChangeTextDocumentNotification.type, params);
    if (!quiet) await send();
    return send;
  }

  // applyWorkspaceEdit applies an edit as vscode-languageclient does: every
  // versioned TextDocumentEdit must match the document's version, else
  // nothing is applied and applied:false says why. Change annotations
  // that need confirmation go to onPreview (by default the user accepts
  // the preview). As in VS Code, a create operation creates the file on disk, and an
  // edit of a document that is not open opens it from disk first; the
  // documents changed stay unsaved (saveAll writes them).
  applyWorkspaceEdit(edit) {
    const confirm = Object.values(edit.changeAnnotations || {}).filter((a) => a.needsConfirmation);
    if (confirm.length > 0 && this.onPreview && !this.onPreview(confirm)) {
      return { applied: false, failureReason: 'the user cancelled the refactor preview' };
    }
    const changes = [];
    const creates = [];
    const texts = new Map(); // uri → the text an edit applies to, for a document not open
    if (edit.documentChanges) {
      for (const dc of edit.documentChanges) {
        if (dc.kind === 'create') {
          const file = fileURLToPath(dc.uri);
          const o = dc.options || {};
          if (fs.existsSync(file) && !o.overwrite && !o.ignoreIfExists) {
            return { applied: false, failureReason: `${dc.uri} exists` };
          }
          creates.push({ uri: dc.uri, file, keep: fs.existsSync(file) && !o.overwrite });
          texts.set(dc.uri, '');
          continue;
        }
        if (dc.kind) return { applied: false, failureReason: `resource operation ${dc.kind} not expected here` };
        const uri = dc.textDocument.uri;
        const doc = this.docs.get(uri);
        if (!doc && !texts.has(uri)) {
          try {
            texts.set(uri, fs.readFileSync(fileURLToPath(uri), 'utf8'));
          } catch (err) {
            return { applied: false, failureReason: `${uri}: ${err.message}` };
          }
        }
        const v = dc.textDocument.version;
        if (doc && v !== null && v !== undefined && v !== doc.version) {
          return {
            applied: false,
            failureReason: `Version ${v} of text document ${uri} doesn't match the current version ${doc.version}`,
          };
        }
        changes.push({ uri, edits: dc.edits });
      }
    } else if (edit.changes) {
      for (const [uri, edits] of Object.entries(edit.changes)) {
        if (!this.docs.get(uri)) {
          try {
            texts.set(uri, fs.readFileSync(fileURLToPath(uri), 'utf8'));
          } catch (err) {
            return { applied: false, failureReason: `${uri}: ${err.message}` };
          }
        }
        changes.push({ uri, edits });
      }
    }
    for (const { uri, file, keep } of creates) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      if (!keep) fs.writeFileSync(file, '');
      if (keep) texts.set(uri, fs.readFileSync(file, 'utf8'));
    }
    for (const [uri, text] of texts) {
      if (this.docs.has(uri)) continue;
      this.docs.set(uri, TextDocument.create(uri, 'plaintext', 1, text));
      this.conn.sendNotification(P.DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId: 'plaintext', version: 1, text },
      });
    }
    for (const { uri, edits } of changes) {
      const doc = this.docs.get(uri);
      const contentChanges = incremental(doc, edits);
      const next = TextDocument.update(doc, contentChanges, doc.version + 1);
      this.docs.set(uri, next);
      this.dirty.add(uri);
      this.conn.sendNotification(P.DidChangeTextDocumentNotification.type, {
        textDocument: { uri, version: next.version }, contentChanges,
      });
    }
    return { applied: true };
  }

  // saveAll writes every document an edit changed to disk, as Save All
  // does, and returns their paths.
  saveAll() {
    const saved = [];
    for (const uri of this.dirty) {
      const file = fileURLToPath(uri);
      fs.writeFileSync(file, this.docs.get(uri).getText());
      saved.push(path.relative(this.root, file));
    }
    this.dirty.clear();
    return saved;
  }

  // waitFor resolves with the first event after index from that pred
  // accepts, or rejects after ms times REIKA_TEST_SLOW (the tests'
  // slowness factor, internal/testslow).
  waitFor(pred, { from = 0, ms = 10000, what = 'an event' } = {}) {
    ms *= Number(process.env.REIKA_TEST_SLOW || 1);
    return new Promise((resolve, reject) => {
      const check = () => {
        for (let i = from; i < this.events.length; i++) {
          if (pred(this.events[i])) {
            this.waiters = this.waiters.filter((w) => w !== check);
            clearTimeout(timer);
            resolve({ index: i, ...this.events[i] });
            return true;
          }
        }
        return false;
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`no ${what} within ${ms} ms; events:\n${this.dump()}\nserver stderr:\n${this.stderr}`));
      }, ms);
      if (!check()) this.waiters.push(check);
    });
  }

  // runEnd waits for the end of a run: the progress's end, then the
  // showMessage that reports it. It returns that message's text.
  async runEnd({ from = 0, ms = 15000 } = {}) {
    const end = await this.waitFor((e) => e.method === '$/progress' && e.params.value.kind === 'end',
      { from, ms, what: 'progress end' });
    const msg = await this.waitFor((e) => e.method === 'window/showMessage', { from: end.index, ms, what: 'end-of-run showMessage' });
    return { end: end.params.value, message: msg.params.message, index: msg.index };
  }

  execute(command, args) {
    return this.conn.sendRequest(P.ExecuteCommandRequest.type, { command, arguments: args });
  }

  dump() {
    return this.events.map((e) => `${e.method} ${JSON.stringify(e.params)}`).join('\n');
  }

  async shutdown() {
    await this.conn.sendRequest(P.ShutdownRequest.type);
    await this.conn.sendNotification(P.ExitNotification.type);
    await new Promise((resolve) => {
      const t = setTimeout(() => { this.proc.kill(); resolve(); }, 3000);
      this.proc.on('exit', () => { clearTimeout(t); resolve(); });
    });
    this.conn.dispose();
  }
}

// incremental turns edits made against doc (all relative to its current
// text, as in a TextDocumentEdit) into content changes applied in order:
// last in the text first, so that every range is still valid when it is
// applied.
function incremental(doc, edits) {
  return edits
    .map((e) => ({ e, at: doc.offsetAt(e.range.start) }))
    .sort((a, b) => b.at - a.at)
    .map(({ e }) => ({ range: e.range, text: e.newText }));
}

module.exports = { Client, capabilities };
