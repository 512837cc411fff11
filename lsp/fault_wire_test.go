package lsp_test

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/lsp/lsptest"
)

// The wire's faults of issue 21, through the real server.

// A request whose id is null is no request in LSP (ids are strings or
// integers; a notification has no id at all): it is answered
// InvalidRequest with the id null, as JSON-RPC 2.0 says of a request
// whose id cannot be told, and its command does not run. Before, the
// library took it for a notification: the command ran and the client
// waited for ever.
func TestFaultNullID(t *testing.T) {
	e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: map[string]string{"main.go": "package main\n"}, Timeout: 5 * time.Second})
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":null,"method":"workspace/executeCommand","params":{"command":"reika.cancel","arguments":[]}}`,
		`{"jsonrpc":"2.0","method":"shutdown","id":null}`,
	} {
		mark := e.Mark()
		e.Raw(framed([]byte(body)))
		got := e.WaitLine(mark, `^answer id null`).Line
		want := `^answer id null: error -32600: (workspace/executeCommand|shutdown): the id is null`
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("%s: answered %q, want /%s/", body, got, want)
		}
		e.Sync()
		for _, ev := range e.Events()[mark:] {
			if ev.Method == "window/showMessage" {
				t.Errorf("%s: the request with a null id ran: %q", body, ev.Line)
			}
		}
	}
	// The server still answers, and did not shut down.
	if _, err := e.Exec("reika.status"); err != nil {
		t.Fatalf("reika.status after the null ids: %v", err)
	}
}

// Four executeCommand bodies of 50 MiB each are refused, each answered
// with its id, and the server's resident memory comes back within 30 MB
// of what it was after initialize (issue 21: it went 17 → 237 → 301 MB
// and stayed there). Half the bodies name their method before the
// params, as VS Code, Helix and eglot write them, and are never held;
// the other half after, as a Lua table may come out of Neovim's encoder,
// and are held until the method is read. The real binary, for its real
// resident set.
func TestFaultHugeBodiesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("200 MiB through the real binary: it runs without -short (go test -tags long ./... in .ci/run); TestStreamSkipsLargeMessage stands for it in process")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skipf("no /proc to read a resident set from: %v", err)
	}
	e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Binary: reikaBinary(t),
		Files: map[string]string{"main.go": "package main\n"}, Timeout: 30 * time.Second})
	e.Open("main.go")
	e.Sync()
	base := vmRSS(t, e.ServerPID())
	const size = 50 << 20
	for i := range 4 {
		id := 9001 + i
		mark := e.Mark()
		start := time.Now()
		e.Raw(framed(hugeExec(id, size, i%2 == 1)))
		got := e.WaitLine(mark, fmt.Sprintf(`^answer id %d: `, id)).Line
		e.Sync()
		t.Logf("body %d (method %s): answered in %v, RSS %d MB: %s", i+1, map[bool]string{false: "first", true: "last"}[i%2 == 1],
			time.Since(start).Round(time.Millisecond), vmRSS(t, e.ServerPID())>>20, got)
		want := fmt.Sprintf(`^answer id %d: error -32600: workspace/executeCommand: the message is \d+ bytes, over reika-lsp's limit of \d+ MiB for workspace/executeCommand; it was skipped$`, id)
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("answered %q, want /%s/", got, want)
		}
	}
	if _, err := e.Exec("reika.status"); err != nil {
		t.Fatalf("reika.status after the huge bodies: %v", err)
	}
	after := vmRSS(t, e.ServerPID())
	t.Logf("VmRSS %d MB after initialize, %d MB after four bodies of %d MiB", base>>20, after>>20, size>>20)
	if after > base+30e6 {
		t.Errorf("VmRSS %d MB after four bodies of %d MiB, %d MB after initialize: want within 30 MB", after>>20, size>>20, base>>20)
	}
}

// hugeExec is a reika.ask of size bytes whose instruction fills it, with
// the method before the params or after them.
func hugeExec(id, size int, methodLast bool) []byte {
	head := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"workspace/executeCommand","params":{"command":"reika.ask","arguments":[{"instruction":"`
	tail := `"}]}}`
	if methodLast {
		head = `{"jsonrpc":"2.0","params":{"command":"reika.ask","arguments":[{"instruction":"`
		tail = `"}]},"method":"workspace/executeCommand","id":` + strconv.Itoa(id) + `}`
	}
	b := make([]byte, 0, size)
	b = append(b, head...)
	b = append(b, bytes.Repeat([]byte("x"), size-len(head)-len(tail))...)
	return append(b, tail...)
}

func framed(body []byte) []byte {
	return append(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(body)), body...)
}

// vmRSS is a process's resident set in bytes, from /proc.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	if pid == 0 {
		t.Fatal("no server process to measure")
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS: %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
