package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is one MCP server to run: a program spoken to over its stdin
// and stdout, or an endpoint of the streamable HTTP transport.
type Server struct {
	// Name is the server's name in its tools' names and in questions.
	Name string
	// Command and Args are the program and its arguments.
	Command string
	Args    []string
	// Env are variables set on top of the environment (Config.Environ).
	Env map[string]string
	// URL, in place of Command, is the server's HTTP endpoint; Headers go
	// with every request to it.
	URL     string
	Headers map[string]string
	// FromClient marks a server an ACP client offered (mcpServers) and the
	// user let start: its tools come after those of the config file's
	// servers.
	FromClient bool
}

// server is a running server: its session, and what became of it.
type server struct {
	spec    Server
	dir     string
	environ []string
	wait    time.Duration

	restartMu sync.Mutex // one restart at a time
	mu        sync.Mutex
	session   *sdk.ClientSession
	restarted bool  // the one restart a server gets was used
	down      error // why it is not running, once it gave up

	changed atomic.Bool                // it announced tools/list_changed
	told    atomic.Bool                // the model heard so
	stderr  atomic.Pointer[tailBuffer] // the running program's

	// onChange, when set, is called on a goroutine of its own when the
	// server announces tools/list_changed (Toolbox.relist).
	onChange func()
	// tools are its tools in force; pending, when listed is set, those
	// it listed after it announced a change, for the next
	// Toolbox.TakeChange. Guarded by the Toolbox's mu.
	tools, pending []*sdk.Tool
	listed         bool
}

// terminate is how long Close waits for a server to exit once its input
// is closed, before it is signalled.
const terminate = 2 * time.Second

// connect starts the server and opens its session, in at most s.wait.
func (s *server) connect(ctx context.Context) (*sdk.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, s.wait)
	defer cancel()
	t, cmd := s.transport()
	client := sdk.NewClient(&sdk.Implementation{Name: "reika", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			s.changed.Store(true)
			if s.onChange != nil {
				// (Not on the session's own goroutine, which the
				// tools/list it makes waits for.)
				go s.onChange()
			}
		},
		Capabilities: &sdk.ClientCapabilities{},
	})
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		if cmd != nil && cmd.Process != nil {
			cmd.Process.Kill()
		}
		if ctx.Err() != nil && !errors.Is(err, context.Canceled) {
			err = fmt.Errorf("no answer in %s", s.wait)
		}
		return nil, s.withOutput(err)
	}
	s.mu.Lock()
	s.session = cs
	s.mu.Unlock()
	return cs, nil
}

// transport is how to reach the server: its endpoint, or its program
// (the command returned) started with the environment and its stderr
// kept.
func (s *server) transport() (sdk.Transport, *exec.Cmd) {
	if s.spec.URL != "" {
		s.stderr.Store(nil)
		client := &http.Client{Transport: withHeaders{s.spec.Headers, http.DefaultTransport}}
		// No retries of the SDK's own: a server that went away gets the
		// one restart the session gives it (call).
		return &sdk.StreamableClientTransport{Endpoint: s.spec.URL, HTTPClient: client, MaxRetries: -1}, nil
	}
	cmd := exec.Command(s.spec.Command, s.spec.Args...)
	cmd.Dir = s.dir
	cmd.Env = append(append([]string(nil), s.environ...), envList(s.spec.Env)...)
	out := &tailBuffer{}
	s.stderr.Store(out)
	cmd.Stderr = out
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: terminate}, cmd
}

// withHeaders adds the configured headers to every request.
type withHeaders struct {
	headers map[string]string
	next    http.RoundTripper
}

func (h withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) == 0 {
		return h.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

// list is the server's tools, in at most s.wait.
func (s *server) list(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.wait)
	defer cancel()
	var list []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, s.withOutput(fmt.Errorf("tools/list: %w", err))
		}
		list = append(list, t)
	}
	return list, nil
}

// call calls tool; a server whose connection is gone is started once
// more and the call made again, and after that it is down.
func (s *server) call(ctx context.Context, tool string, args map[string]any) (*sdk.CallToolResult, error) {
	cs, err := s.live()
	if err != nil {
		return nil, err
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err == nil || ctx.Err() != nil || !gone(cs, err) {
		return res, err
	}
	cs, err = s.restart(ctx, cs, err)
	if err != nil {
		return nil, err
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil && ctx.Err() == nil && gone(cs, err) {
		return nil, s.giveUp(s.withOutput(err))
	}
	return res, err
}

// errDown says a server is not running; its text is the reason.
type errDown struct{ err error }

func (e errDown) Error() string { return e.err.Error() }
func (e errDown) Unwrap() error { return e.err }

// live is the session in force, or why there is none.
func (s *server) live() (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down != nil {
		return nil, errDown{s.down}
	}
	return s.session, nil
}

// restart starts a server whose session (failed) broke (why) again, once
// in the session; a call that finds it started again by another call
// meanwhile gets the new session.
func (s *server) restart(ctx context.Context, failed *sdk.ClientSession, why error) (*sdk.ClientSession, error) {
	s.restartMu.Lock()
	defer s.restartMu.Unlock()
	s.mu.Lock()
	used, now, down := s.restarted, s.session, s.down
	s.restarted = true
	s.mu.Unlock()
	switch {
	case down != nil:
		return nil, errDown{down}
	case now != nil && now != failed:
		return now, nil
	case used:
		return nil, s.giveUp(s.withOutput(why))
	}
	why = s.withOutput(why)
	if failed != nil {
		failed.Close()
	}
	cs, err := s.connect(ctx)
	if err != nil {
		return nil, s.giveUp(fmt.Errorf("%v, and it did not start again: %w", why, err))
	}
	return cs, nil
}

// giveUp marks the server down for the rest of the session.
func (s *server) giveUp(why error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down == nil {
		s.down = why
	}
	return errDown{s.down}
}

// gone reports whether err means the connection to the server is lost,
// rather than an error the server answered with.
func gone(cs *sdk.ClientSession, err error) bool {
	if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var netErr net.Error
	var urlErr *url.Error
	if errors.As(err, &netErr) || errors.As(err, &urlErr) {
		// An HTTP server that is not there (the SDK wraps this in its
		// jsonrpc ErrRejected too, so it is looked for first).
		return true
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return false
	}
	done := make(chan struct{})
	// (Wait returns when the session ends, at the latest at Close.)
	go func() { cs.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(100 * time.Millisecond):
		return strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "closed")
	}
}

// close stops the server.
func (s *server) close() {
	s.mu.Lock()
	cs := s.session
	s.session = nil
	s.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
}

// withOutput adds the end of what the server wrote on its stderr to err.
func (s *server) withOutput(err error) error {
	b := s.stderr.Load()
	if b == nil {
		return err
	}
	if out := strings.TrimSpace(b.String()); out != "" {
		return fmt.Errorf("%w (its last output: %s)", err, out)
	}
	return err
}

// envList is env as NAME=value lines, in the order of their names.
func envList(env map[string]string) []string {
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// tailBuffer keeps the last bytes written to it: a server's stderr.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailKeep = 512

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > tailKeep {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-tailKeep:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.ToValidUTF8(string(b.buf), "�")
}

// environ is the environment servers start with: the process's own.
func environ(env []string) []string {
	if env == nil {
		return os.Environ()
	}
	return env
}
