package llamatest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// Command is the wrapper .ci/install-llama installs: llama-server run
// through Debian sid's loader from a private root.
const Command = "llama-server-ci"

// Options configure the real engine.
type Options struct {
	// Ctx is the slot's window in tokens (-c); 0 means 4096.
	Ctx int
	// Model is the model written for it; the zero value means TinyModel
	// (TinySWAModel and TinyRecurrentModel are the other classes).
	Model Model
	// Ready bounds the wait for /health; 0 means 20 s. Either is
	// multiplied by REIKA_TEST_SLOW (internal/testslow).
	Ready time.Duration
	// SlotSavePath, when set, is the engine's --slot-save-path: slot
	// save and restore are allowed, their files in that directory.
	SlotSavePath string
	// Args are more llama-server flags, put after Start's own: e.g.
	// "--ctx-checkpoints", "4", "--checkpoint-min-step", "0",
	// "--swa-full", or "-lv", "4" (the model's figures and memory in the
	// Log).
	Args []string
}

// Server is a llama-server process on loopback, stopped when the test
// ends.
type Server struct {
	// URL is the server's base URL, without /v1.
	URL string
	// Ctx is its window in tokens.
	Ctx int
	// Model is the model it serves.
	Model Model

	log *lockedBuffer
}

// Need returns the path of llama-server-ci, or skips the test when it is
// not installed — fails it when REIKA_EDITORS=require, so that CI never
// passes by skipping.
func Need(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath(Command)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("%s is not installed (.ci/install-llama installs it)", Command)
	if os.Getenv("REIKA_EDITORS") == "require" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Start writes the model into the test's temporary directory, starts
// llama-server on a free loopback port with one slot, one thread, the
// ChatML template and Jinja (the --jinja that README.md's table of
// engines asks for) and flash attention (twice as fast a prefill on the
// CPU; the cache is the same), and waits until its /health answers 200.
//
// ChatML renders only the messages' roles and contents: tool definitions
// and tool calls do not reach the prompt, so the engine counts fewer
// tokens than a tool-aware template would. The cache figures are exact
// all the same.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin := Need(t)
	if opts.Ctx == 0 {
		opts.Ctx = 4096
	}
	if opts.Model == (Model{}) {
		opts.Model = TinyModel
	}
	if opts.Ready == 0 {
		opts.Ready = 20 * time.Second
	}
	opts.Ready = testslow.Scale(opts.Ready)
	model := filepath.Join(t.TempDir(), "tiny.gguf")
	f, err := os.Create(model)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteModel(f, opts.Model); err != nil {
		t.Fatalf("write the model: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatalf("find a free loopback port: %v", err)
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), Ctx: opts.Ctx, Model: opts.Model, log: &lockedBuffer{}}
	cmd := exec.Command(bin, "-m", model, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"-c", strconv.Itoa(opts.Ctx), "-np", "1", "-t", "1", "-fa", "on", "--jinja", "--chat-template", "chatml")
	if opts.SlotSavePath != "" {
		cmd.Args = append(cmd.Args, "--slot-save-path", opts.SlotSavePath)
	}
	cmd.Args = append(cmd.Args, opts.Args...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	if err := s.waitHealthy(opts.Ready, exited); err != nil {
		t.Fatalf("%s on port %d: %v\n%s", Command, port, err, s.Log())
	}
	return s
}

// Log is what the server printed so far.
func (s *Server) Log() string { return s.log.String() }

// waitHealthy polls /health until it answers 200 (503 while the model
// loads), the process exits, or the wait is over.
func (s *Server) waitHealthy(d time.Duration, exited <-chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/health", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("exited before it was ready: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("not healthy after %v", d)
		case <-tick.C:
		}
	}
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before the server binds it; then the server exits and the test
// fails with its log.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// lockedBuffer is a bytes.Buffer the process's output goroutines and the
// test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
