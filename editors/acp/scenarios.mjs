// Scenarios of `reika-lsp acp` driven by the Agent Client Protocol's own
// TypeScript SDK (its client app, which parses every message the agent
// sends with the protocol's generated schemas), as an editor would: it
// starts `reika-lsp acp` from PATH in the current directory (the
// workspace), keeps buffers of its own behind fs/*, and answers
// permission requests. Run by editors/acp_test.go:
//
//   node scenarios.mjs NAME
//
// prints "ok NAME" when the scenario held, else why not, and exits 1.
import * as acp from '@agentclientprotocol/sdk';
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import fs from 'node:fs';
import path from 'node:path';

const workspace = process.cwd();

// Everything the SDK found wrong in what the agent sent (a message or
// params its schemas reject) is logged with console.error: it fails the
// scenario.
const complaints = [];
const consoleError = console.error;
console.error = (...args) => {
  complaints.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
  consoleError(...args);
};

function fail(why) {
  throw new Error(why);
}

// An editor: one `reika-lsp acp` process and what it sent.
class Editor {
  constructor({ fs: offersFs = true, answer = 'once', terminal = false } = {}) {
    this.updates = [];
    this.asked = [];
    this.buffers = new Map();
    this.terminals = new Map();
    this.released = [];
    this.offersTerminal = terminal;
    this.answer = answer;
    this.onChunk = null;
    this.proc = spawn('reika-lsp', ['acp'], { stdio: ['pipe', 'pipe', 'inherit'], cwd: workspace });
    const stream = acp.ndJsonStream(Writable.toWeb(this.proc.stdin), Readable.toWeb(this.proc.stdout));
    const app = acp
      .client({ name: 'reika-acp-test' })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.updates.push(params.update);
        if (params.update.sessionUpdate === 'agent_message_chunk' && this.onChunk) this.onChunk();
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        this.asked.push(params);
        return { outcome: { outcome: 'selected', optionId: this.answer } };
      })
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
        if (this.buffers.has(params.path)) return { content: this.buffers.get(params.path) };
        return { content: fs.readFileSync(params.path, 'utf8') };
      })
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
        this.buffers.set(params.path, params.content);
        return {};
      })
      // A terminal: the command runs here, as the editor would run it.
      .onRequest(acp.methods.client.terminal.create, ({ params }) => {
        const id = `term-${this.terminals.size + 1}`;
        const child = spawn(params.command, params.args ?? [], { cwd: params.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
        const t = { command: [params.command, ...(params.args ?? [])].join(' '), output: '', exit: null };
        child.stdout.on('data', (d) => (t.output += d));
        child.stderr.on('data', (d) => (t.output += d));
        t.exited = new Promise((resolve) => child.on('close', (code, signal) => resolve((t.exit = { exitCode: code, signal }))));
        t.child = child;
        this.terminals.set(id, t);
        return { terminalId: id };
      })
      .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
        const e = await this.terminals.get(params.terminalId).exited;
        return e.exitCode === null ? { signal: e.signal } : { exitCode: e.exitCode };
      })
      .onRequest(acp.methods.client.terminal.output, ({ params }) => {
        const t = this.terminals.get(params.terminalId);
        return { output: t.output, truncated: false, ...(t.exit ? { exitStatus: t.exit.exitCode === null ? { signal: t.exit.signal } : { exitCode: t.exit.exitCode } } : {}) };
      })
      .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
        this.terminals.get(params.terminalId).child.kill();
        return {};
      })
      .onRequest(acp.methods.client.terminal.release, ({ params }) => {
        this.released.push(params.terminalId);
        return {};
      });
    this.conn = app.connect(stream);
    this.agent = this.conn.agent;
    this.offersFs = offersFs;
  }

  async initialize() {
    const res = await this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: this.offersFs, writeTextFile: this.offersFs }, terminal: this.offersTerminal },
    });
    if (res.protocolVersion !== acp.PROTOCOL_VERSION) fail(`protocol version ${res.protocolVersion}`);
    if (!res.agentCapabilities.loadSession) fail('no loadSession capability');
    if (res.authMethods.length !== 0) fail(`auth methods ${JSON.stringify(res.authMethods)}`);
    return res;
  }

  async newSession() {
    const res = await this.agent.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] });
    this.session = res.sessionId;
    return res;
  }

  prompt(text) {
    return this.agent.request(acp.methods.agent.session.prompt, {
      sessionId: this.session,
      prompt: [{ type: 'text', text }],
    });
  }

  of(kind) {
    return this.updates.filter((u) => u.sessionUpdate === kind);
  }

  text(kind) {
    return this.of(kind).map((u) => u.content.text).join('');
  }

  async close() {
    this.proc.stdin.end();
    await new Promise((resolve) => this.proc.once('exit', resolve));
  }
}

const scenarios = {
  // The answer streams in chunks, the chip comes as usage, the commands
  // are offered, and the turn ends with end_turn.
  async prompt() {
    const e = new Editor();
    await e.initialize();
    const s = await e.newSession();
    const modes = s.modes.availableModes.map((m) => m.id).join(' ');
    if (modes !== 'normal ask plan') fail(`modes ${modes}`);
    const res = await e.prompt('What does greet.go do?');
    if (res.stopReason !== 'end_turn') fail(`stopReason ${res.stopReason}`);
    const chunks = e.of('agent_message_chunk');
    if (chunks.length < 2 || e.text('agent_message_chunk') !== process.env.REIKA_TEST_ANSWER) {
      fail(`streamed ${JSON.stringify(e.text('agent_message_chunk'))} in ${chunks.length} chunks`);
    }
    const usage = e.of('usage_update');
    if (usage.length === 0 || usage.at(-1).size !== 8192 || !(usage.at(-1).used > 0)) fail(`usage ${JSON.stringify(usage)}`);
    for (let i = 0; i < 100 && e.of('available_commands_update').length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const names = e.of('available_commands_update')[0]?.availableCommands.map((c) => c.name).join(' ');
    if (names !== 'compact recap status new save') fail(`commands ${names}`);
    const status = await e.prompt('/status');
    if (status.stopReason !== 'end_turn' || !/prefix .* map .* recap .* history/.test(e.text('agent_message_chunk'))) {
      fail(`/status answered ${JSON.stringify(e.text('agent_message_chunk'))}`);
    }
    await e.close();
  },

  // An edit is a tool_call of kind edit at greet.go, then an update with
  // the diff; it lands in the editor's buffer, not on the disk.
  async diff() {
    const e = new Editor();
    await e.initialize();
    await e.newSession();
    const res = await e.prompt('Make the greeting louder.');
    if (res.stopReason !== 'end_turn') fail(`stopReason ${res.stopReason}`);
    const abs = path.join(workspace, 'greet.go');
    const call = e.of('tool_call').find((u) => u.kind === 'edit');
    if (!call || call.title !== 'Edit greet.go' || call.locations?.[0]?.path !== abs) fail(`tool calls ${JSON.stringify(e.of('tool_call'))}`);
    const ups = e.of('tool_call_update').filter((u) => u.toolCallId === call.toolCallId);
    const diff = ups.flatMap((u) => u.content ?? []).find((c) => c.type === 'diff');
    if (!diff || diff.path !== abs || !diff.newText.includes('"Hello, " + name + "!"') || !diff.oldText.includes('"hello, " + name')) {
      fail(`diff ${JSON.stringify(diff)}`);
    }
    if (!ups.some((u) => u.status === 'completed')) fail(`updates ${JSON.stringify(ups)}`);
    if (e.buffers.get(abs) !== diff.newText) fail(`buffer ${JSON.stringify(e.buffers.get(abs))}`);
    await e.close();
  },

  // In the ask mode the edit asks first with its diff; the answer is
  // REIKA_TEST_ANSWER (deny or once), and the buffer shows it.
  async permission() {
    const answer = process.env.REIKA_TEST_ANSWER;
    const e = new Editor({ answer });
    await e.initialize();
    await e.newSession();
    await e.agent.request(acp.methods.agent.session.setMode, { sessionId: e.session, modeId: 'ask' });
    const res = await e.prompt('Make the greeting louder.');
    if (res.stopReason !== 'end_turn') fail(`stopReason ${res.stopReason}`);
    if (e.asked.length !== 1) fail(`asked ${e.asked.length} times`);
    const q = e.asked[0];
    const kinds = q.options.map((o) => o.kind).join(' ');
    if (kinds !== 'allow_once reject_once') fail(`options ${kinds}`);
    if (!q.toolCall.content?.some((c) => c.type === 'diff')) fail(`no diff in ${JSON.stringify(q.toolCall)}`);
    const written = e.buffers.has(path.join(workspace, 'greet.go'));
    if (written !== (answer === 'once')) fail(`answered ${answer}, written ${written}`);
    await e.close();
  },

  // session/cancel at the first chunk of a slow answer: the turn ends
  // with cancelled, and the next prompt is answered.
  async cancel() {
    const e = new Editor();
    await e.initialize();
    await e.newSession();
    e.onChunk = () => {
      e.onChunk = null;
      e.agent.notify(acp.methods.agent.session.cancel, { sessionId: e.session });
    };
    const res = await e.prompt('Tell me a long story.');
    if (res.stopReason !== 'cancelled') fail(`stopReason ${res.stopReason}`);
    const got = e.text('agent_message_chunk');
    if (got === '' || got.length >= 400) fail(`streamed ${got.length} bytes before the cancel took`);
    e.updates = [];
    const next = await e.prompt('Go on.');
    if (next.stopReason !== 'end_turn' || e.text('agent_message_chunk') !== 'Next.') fail(`next ${JSON.stringify(next)} ${e.text('agent_message_chunk')}`);
    await e.close();
  },

  // The editor restarts the agent and loads the session: its conversation
  // comes back as updates before the answer, and the next prompt goes on.
  async load() {
    const first = new Editor();
    await first.initialize();
    await first.newSession();
    await first.prompt('What does greet.go do?');
    await first.close();
    const e = new Editor();
    await e.initialize();
    await e.agent.request(acp.methods.agent.session.load, { sessionId: first.session, cwd: workspace, mcpServers: [] });
    e.session = first.session;
    if (e.text('user_message_chunk') !== 'What does greet.go do?') fail(`replayed user ${JSON.stringify(e.text('user_message_chunk'))}`);
    if (e.text('agent_message_chunk') !== 'It greets.') fail(`replayed agent ${JSON.stringify(e.text('agent_message_chunk'))}`);
    e.updates = [];
    const res = await e.prompt('And then?');
    if (res.stopReason !== 'end_turn' || e.text('agent_message_chunk') !== 'Then it returns.') fail(`after load ${e.text('agent_message_chunk')}`);
    await e.close();
  },

  // No engine: session/new fails with what happened and what to do.
  async 'engine-down'() {
    const e = new Editor();
    await e.initialize();
    try {
      await e.newSession();
      fail('session/new succeeded without an engine');
    } catch (err) {
      if (!(err instanceof acp.RequestError) || !/unreachable.*check the endpoint/.test(err.message)) fail(`error ${err}`);
    }
    await e.close();
  },

  // The engine's window is smaller than configured: each refusal is a
  // status line of its own, none of it in the answer.
  async overflow() {
    const e = new Editor();
    await e.initialize();
    await e.newSession();
    const res = await e.prompt('Read the logs one by one.');
    if (res.stopReason !== 'end_turn') fail(`stopReason ${res.stopReason}`);
    const lines = e.of('tool_call').filter((u) => /too long/.test(u.title));
    if (lines.length === 0 || lines.some((u) => u.kind !== 'other' || u.status !== 'completed')) fail(`lines ${JSON.stringify(lines)}`);
    const answer = e.text('agent_message_chunk');
    if (/too long/.test(answer) || !answer.endsWith('They passed.')) fail(`answer ${answer}`);
    await e.close();
  },

  // A command the user lets out of the sandbox runs in the editor's
  // terminal, shown on its tool call, and the terminal is released.
  async terminal() {
    const e = new Editor({ terminal: true, answer: 'once' });
    await e.initialize();
    await e.newSession();
    const res = await e.prompt('Run it outside the sandbox.');
    if (res.stopReason !== 'end_turn' || e.text('agent_message_chunk') !== 'It printed.') fail(`answer ${e.text('agent_message_chunk')}`);
    const t = e.terminals.get('term-1');
    if (e.terminals.size !== 1 || t.command !== 'bash -c echo from-the-terminal' || t.output !== 'from-the-terminal\n') {
      fail(`terminals ${JSON.stringify([...e.terminals.entries()].map(([id, x]) => [id, x.command, x.output]))}`);
    }
    if (e.released.join(' ') !== 'term-1') fail(`released ${e.released}`);
    const shown = e.of('tool_call_update').some((u) => (u.content ?? []).some((c) => c.type === 'terminal' && c.terminalId === 'term-1'));
    if (!shown) fail(`the terminal is not on the tool call: ${JSON.stringify(e.of('tool_call_update'))}`);
    await e.close();
  },

  // A tool call the engine cut short is a failed tool call; the run
  // answers.
  async malformed() {
    const e = new Editor();
    await e.initialize();
    await e.newSession();
    const res = await e.prompt('Read greet.go.');
    if (res.stopReason !== 'end_turn' || e.text('agent_message_chunk') !== 'Recovered.') fail(`answer ${e.text('agent_message_chunk')}`);
    const failed = e.of('tool_call_update').find((u) => u.status === 'failed');
    if (!failed || !JSON.stringify(failed.content).includes('not valid JSON')) fail(`updates ${JSON.stringify(e.of('tool_call_update'))}`);
    await e.close();
  },
};

const name = process.argv[2];
if (!scenarios[name]) {
  consoleError(`no scenario ${name}; the scenarios: ${Object.keys(scenarios).join(', ')}`);
  process.exit(2);
}
try {
  await scenarios[name]();
  if (complaints.length > 0) fail(`the SDK complained:\n${complaints.join('\n')}`);
  console.log(`ok ${name}`);
  process.exit(0);
} catch (err) {
  consoleError(`${name}: ${err.stack ?? err}`);
  process.exit(1);
}
