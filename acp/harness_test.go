package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/internal/testslow"
)

// A world is one test's workspace, simulated engine and state directory.
type world struct {
	t        *testing.T
	ws       string
	engine   *sim.Server
	http     *httptest.Server
	stateDir string
	env      map[string]string
	// limit bounds a connection (times REIKA_TEST_SLOW): the server's
	// context and the client's calls end together at its deadline.
	limit time.Duration
}

// requests waits until the engine has recorded n requests and returns
// them in the order they came: it records a request when its handler
// returns, which may be after the client has its answer and moved on.
func (w *world) requests(t *testing.T, n int) []sim.RequestRecord {
	t.Helper()
	deadline := time.Now().Add(testslow.Scale(10 * time.Second))
	for len(w.engine.Requests()) < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	recs := w.engine.Requests()
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Seq < recs[j].Seq })
	if len(recs) < n {
		t.Fatalf("the engine recorded %d requests, want %d", len(recs), n)
	}
	return recs
}

// settled waits until the engine has recorded every chat request that
// has arrived and returns the records in the order they arrived. Call it
// once the client has its answers.
func (w *world) settled(t *testing.T) []sim.RequestRecord {
	t.Helper()
	n := w.engine.Arrived()
	if n == 0 {
		t.Fatal("the engine has had no chat request")
	}
	return w.requests(t, n)
}

func newWorld(t *testing.T, cfg sim.Config, files map[string]string) *world {
	t.Helper()
	if cfg.Ctx == 0 {
		cfg.Ctx = 16384
	}
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	w := &world{t: t, ws: filepath.Join(t.TempDir(), "ws"), engine: srv, http: ts, stateDir: t.TempDir(), limit: 60 * time.Second}
	os.MkdirAll(filepath.Join(w.ws, ".git"), 0o755)
	for name, text := range files {
		p := filepath.Join(w.ws, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.env = map[string]string{"REIKA_ENDPOINT": ts.URL + "/v1", "XDG_CONFIG_HOME": t.TempDir(), "REIKA_WARMUP": "0", "HOME": t.TempDir()}
	return w
}

func (w *world) read(name string) string {
	b, err := os.ReadFile(filepath.Join(w.ws, name))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

// client is an editor as the SDK's client side: it records every update,
// keeps buffers of its own (fs/*) when it offers them, and answers
// permission requests with answer.
type client struct {
	fs     bool
	save   bool // fs/write_text_file writes the file to disk too, as an editor that saves at once
	answer func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome

	mu      sync.Mutex
	updates []string // each update as JSON
	asked   []sdk.RequestPermissionRequest
	buffers map[string]string // the editor's text, by absolute path
	written []string
	onChunk func() // called at each agent_message_chunk
	// afterRead, when set, is called after each fs/read_text_file with
	// its count (from 1), under mu: the user typing meanwhile.
	afterRead func(n int)
	reads     int
	// terminal offers terminal/*: commands run here, as the editor would.
	terminal  bool
	terminals map[string]*terminal
	released  []string
	// compaction offers the unstable compaction updates
	// (clientCapabilities.session.compaction), which the SDK's types do
	// not hold: the initialize line is written with it added.
	compaction bool
	// raw are the server's lines as it wrote them, for the updates the
	// SDK cannot decode.
	raw []string
}

// rawMatching are the server's session/update lines of one kind,
// decoded to their update.
func (c *client) rawMatching(kind string) []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]any
	for _, line := range c.raw {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Update map[string]any `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method == "session/update" && m.Params.Update["sessionUpdate"] == kind {
			out = append(out, m.Params.Update)
		}
	}
	return out
}

// tap records the lines the server writes, whole (each Write is one
// message), and passes them on.
type tap struct {
	w io.Writer
	c *client
}

func (t tap) Write(p []byte) (int, error) {
	t.c.mu.Lock()
	t.c.raw = append(t.c.raw, string(p))
	t.c.mu.Unlock()
	return t.w.Write(p)
}

// offering writes the client's lines, its initialize with the
// compaction capability added.
type offering struct{ w io.Writer }

func (o offering) Write(p []byte) (int, error) {
	var m map[string]any
	if !bytes.Contains(p, []byte(`"method":"initialize"`)) || json.Unmarshal(p, &m) != nil {
		return o.w.Write(p)
	}
	params, _ := m["params"].(map[string]any)
	caps, _ := params["clientCapabilities"].(map[string]any)
	if caps == nil {
		return o.w.Write(p)
	}
	caps["session"] = map[string]any{"compaction": map[string]any{}}
	q, _ := json.Marshal(m)
	if _, err := o.w.Write(append(q, '\n')); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *client) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	b, _ := json.Marshal(n.Update)
	c.mu.Lock()
	c.updates = append(c.updates, string(b))
	f := c.onChunk
	c.mu.Unlock()
	if f != nil && n.Update.AgentMessageChunk != nil {
		f()
	}
	return nil
}

func (c *client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, p)
	c.mu.Unlock()
	if c.answer == nil {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: c.answer(p)}, nil
}

func (c *client) ReadTextFile(ctx context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	text, ok := c.buffers[p.Path]
	c.reads++
	if c.afterRead != nil {
		c.afterRead(c.reads)
	}
	c.mu.Unlock()
	if ok {
		return sdk.ReadTextFileResponse{Content: text}, nil
	}
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return sdk.ReadTextFileResponse{Content: string(b)}, nil
}

func (c *client) WriteTextFile(ctx context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buffers == nil {
		c.buffers = map[string]string{}
	}
	c.buffers[p.Path] = p.Content
	c.written = append(c.written, p.Path)
	if c.save {
		if err := os.WriteFile(p.Path, []byte(p.Content), 0o644); err != nil {
			return sdk.WriteTextFileResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
		}
	}
	return sdk.WriteTextFileResponse{}, nil
}

var errNoTerminal = errors.New("this client has no terminal")

// A terminal of the client's: a command it runs for the agent.
type terminal struct {
	command string
	done    chan struct{}
	out     strings.Builder
	exit    int
	cmd     *exec.Cmd
}

func (c *client) CreateTerminal(ctx context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	if !c.terminal {
		return sdk.CreateTerminalResponse{}, errNoTerminal
	}
	tm := &terminal{command: p.Command + " " + strings.Join(p.Args, " "), done: make(chan struct{})}
	tm.cmd = exec.Command(p.Command, p.Args...)
	if p.Cwd != nil {
		tm.cmd.Dir = *p.Cwd
	}
	tm.cmd.Stdout, tm.cmd.Stderr = &tm.out, &tm.out
	if err := tm.cmd.Start(); err != nil {
		return sdk.CreateTerminalResponse{}, err
	}
	go func() {
		tm.cmd.Wait()
		tm.exit = tm.cmd.ProcessState.ExitCode()
		close(tm.done)
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.terminals == nil {
		c.terminals = map[string]*terminal{}
	}
	id := fmt.Sprintf("term-%d", len(c.terminals)+1)
	c.terminals[id] = tm
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (c *client) term(id string) *terminal {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.terminals[id]
}

func (c *client) KillTerminal(ctx context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	c.term(p.TerminalId).cmd.Process.Kill()
	return sdk.KillTerminalResponse{}, nil
}

func (c *client) TerminalOutput(ctx context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	tm := c.term(p.TerminalId)
	<-tm.done // the tests read it after the exit only
	return sdk.TerminalOutputResponse{Output: tm.out.String()}, nil
}

func (c *client) ReleaseTerminal(ctx context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	c.mu.Lock()
	c.released = append(c.released, p.TerminalId)
	c.mu.Unlock()
	return sdk.ReleaseTerminalResponse{}, nil
}

func (c *client) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	tm := c.term(p.TerminalId)
	select {
	case <-tm.done:
		return sdk.WaitForTerminalExitResponse{ExitCode: &tm.exit}, nil
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
}

// kinds are the sessionUpdate values received, in order.
func (c *client) kinds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, u := range c.updates {
		var v struct {
			SessionUpdate string `json:"sessionUpdate"`
		}
		json.Unmarshal([]byte(u), &v)
		out = append(out, v.SessionUpdate)
	}
	return out
}

// matching are the updates of one kind, decoded.
func (c *client) matching(kind string) []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]any
	for _, u := range c.updates {
		var v map[string]any
		json.Unmarshal([]byte(u), &v)
		if v["sessionUpdate"] == kind {
			out = append(out, v)
		}
	}
	return out
}

// text is the text of the chunks of one kind, joined.
func (c *client) text(kind string) string {
	var b strings.Builder
	for _, u := range c.matching(kind) {
		if content, ok := u["content"].(map[string]any); ok {
			s, _ := content["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

func (c *client) all() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.updates, "\n")
}

// conn is a connection to a server of the world's, over pipes.
type conn struct {
	*sdk.ClientSideConnection
	ctx  context.Context
	stop func()
}

func (w *world) connect(c *client) *conn {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testslow.Scale(w.limit))
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, sr, tap{sw, c}, Options{Getenv: func(k string) string { return w.env[k] }, StateDir: w.stateDir, Log: io.Discard, Version: "test"})
		sw.Close()
	}()
	var out io.Writer = cw
	if c.compaction {
		out = offering{cw}
	}
	cc := sdk.NewClientSideConnection(c, out, cr)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cw.Close()
			select {
			case <-done:
			case <-time.After(testslow.Scale(10 * time.Second)):
				w.t.Error("Serve did not return after the client closed its end")
			}
			cancel()
		})
	}
	w.t.Cleanup(stop)
	caps := sdk.ClientCapabilities{}
	if c.fs {
		caps.Fs = sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}
	}
	caps.Terminal = c.terminal
	if _, err := cc.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps}); err != nil {
		w.t.Fatal(err)
	}
	return &conn{ClientSideConnection: cc, ctx: ctx, stop: stop}
}

func (c *conn) newSession(t *testing.T, cwd string) sdk.SessionId {
	t.Helper()
	res, err := c.NewSession(c.ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	return res.SessionId
}

func (c *conn) prompt(t *testing.T, id sdk.SessionId, text string) (sdk.PromptResponse, error) {
	t.Helper()
	return c.Prompt(c.ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
}

func selected(id string) sdk.RequestPermissionOutcome {
	return sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(id))
}
