package lsp_test

import (
	"fmt"
	"regexp"
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

func framed(body []byte) []byte {
	return append(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(body)), body...)
}
