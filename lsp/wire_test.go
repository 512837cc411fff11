package lsp_test

import (
	"context"
	"encoding/json"
	"net"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"
)

// The chosen pair, go.lsp.dev/protocol v0.12.0 with jsonrpc2 v0.10.0 (v1
// does not compile with it), carries an initialize round trip over a real
// transport. It also pins the library's first known defect (ENGINES.md):
// numeric request ids reach a handler as float64, which its cancellation
// does not match, so the server must handle $/cancelRequest itself.
func TestProtocolOverJSONRPC2(t *testing.T) {
	ctx := context.Background()
	clientSide, serverSide := net.Pipe()
	defer clientSide.Close()

	type cancelSeen struct{ id any }
	cancels := make(chan cancelSeen, 1)
	srv := jsonrpc2.NewConn(jsonrpc2.NewStream(serverSide))
	srv.Go(ctx, func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		switch req.Method() {
		case protocol.MethodInitialize:
			var p protocol.InitializeParams
			if err := json.Unmarshal(req.Params(), &p); err != nil {
				return reply(ctx, nil, err)
			}
			return reply(ctx, &protocol.InitializeResult{
				Capabilities: protocol.ServerCapabilities{TextDocumentSync: protocol.TextDocumentSyncKindIncremental},
				ServerInfo:   &protocol.ServerInfo{Name: "wire-test", Version: p.ClientInfo.Name},
			}, nil)
		case protocol.MethodCancelRequest:
			var p struct {
				ID any `json:"id"`
			}
			json.Unmarshal(req.Params(), &p)
			cancels <- cancelSeen{p.ID}
			return nil
		}
		return reply(ctx, nil, jsonrpc2.ErrMethodNotFound)
	})
	defer srv.Close()

	cli := jsonrpc2.NewConn(jsonrpc2.NewStream(clientSide))
	cli.Go(ctx, jsonrpc2.MethodNotFoundHandler)
	defer cli.Close()
	server := protocol.ServerDispatcher(cli, zap.NewNop())

	res, err := server.Initialize(ctx, &protocol.InitializeParams{ClientInfo: &protocol.ClientInfo{Name: "probe"}})
	if err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	if res.ServerInfo == nil || res.ServerInfo.Version != "probe" {
		t.Errorf("Initialize result = %+v, want the server info echoing the client", res)
	}
	if err := cli.Notify(ctx, protocol.MethodCancelRequest, map[string]any{"id": 7}); err != nil {
		t.Fatal(err)
	}
	if got := (<-cancels).id; got != float64(7) {
		t.Errorf("$/cancelRequest id decoded as %T %v, want float64 7 (the defect the server works around)", got, got)
	}
}
