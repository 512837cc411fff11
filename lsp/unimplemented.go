package lsp

import (
	"context"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// What Reika leaves out. Any request it does not serve is answered with
// MethodNotFound, and any other notification is dropped, by Server.handle;
// the notifications below are known and deliberately ignored.

// methodCodeActionResolve is LSP 3.16's codeAction/resolve, which
// go.lsp.dev names nowhere.
const methodCodeActionResolve = "codeAction/resolve"

// ignored are the notifications Reika accepts and does nothing with: it
// keeps its own log (Options.Log) and sends no $/logTrace.
var ignored = []string{
	protocol.MethodSetTrace,
	protocol.MethodLogTrace,
}

func ignore(*Server, context.Context, jsonrpc2.Request, jsonrpc2.Replier) (any, error) {
	return nil, nil
}
