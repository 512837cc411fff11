package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// The two ways a client stops work: $/cancelRequest for a request the
// server is still answering (and the run a reika.ask started), and
// window/workDoneProgress/cancel for the run behind a progress.

// cancelParams are $/cancelRequest's params with the id kept raw:
// go.lsp.dev decodes a numeric id as float64, which its own cancellation
// never matches (defect 1 in doc.go, pinned by TestProtocolOverJSONRPC2).
// VS Code and Neovim send numbers.
type cancelParams struct {
	ID json.RawMessage `json:"id"`
}

// cancelRequest cancels a request the server is still working on.
func (s *Server) cancelRequest(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var p cancelParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	// A cancelled ask stops the run it started.
	s.runs.cancelRequest(idKey(string(p.ID)))
	return nil, nil
}

// progressCancel is the user pressing cancel on the progress.
func (s *Server) progressCancel(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var p protocol.WorkDoneProgressCancelParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	s.runs.cancelProgress(p.Token.String())
	return nil, nil
}

// idKey names a request id the same way whether it came as a request's id
// or inside $/cancelRequest's params.
func idKey(raw string) string {
	return strings.Trim(strings.TrimSpace(raw), `"`)
}

// callKey is the key of a call's id, "" for a notification.
func callKey(req jsonrpc2.Request) string {
	if call, ok := req.(*jsonrpc2.Call); ok {
		return idKey(fmt.Sprint(call.ID()))
	}
	return ""
}
