package lsp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/lsp/lsptest"
)

// An instruction over 256 KiB is refused with a message that says the
// limit, and the server goes on.
func TestAskInstructionLimit(t *testing.T) {
	e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: map[string]string{"main.go": "package main\n"}})
	_, err := e.Exec("reika.ask", map[string]any{"instruction": strings.Repeat("x", 256<<10+1)})
	var rpcErr *lsptest.RPCError
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 || !strings.Contains(rpcErr.Message, "over the limit of 262144 (256 KiB)") {
		t.Fatalf("reika.ask with 256 KiB + 1 = %v, want InvalidParams saying the limit", err)
	}
	e.Sync()
}
