package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"github.com/reika-lsp/reika/internal/testslow"
)

// The chosen pair, go.lsp.dev/protocol v0.12.0 with jsonrpc2 v0.10.0 (v1
// does not compile with it), carries an initialize round trip over a real
// transport. It also pins the library's first known defect (doc.go, defect 1):
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

// Defect 3: TextDocumentContentChangeEvent holds its range as a value, so a
// whole-document change (no range) decodes the same as an insertion at
// 0:0. The server decodes didChange's changes itself (DecodeChanges).
func TestContentChangeRangeIsAValue(t *testing.T) {
	var whole, atStart protocol.TextDocumentContentChangeEvent
	if err := json.Unmarshal([]byte(`{"text":"x"}`), &whole); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"text":"x"}`), &atStart); err != nil {
		t.Fatal(err)
	}
	if whole != atStart {
		t.Errorf("a whole-document change decodes as %+v and an insertion at 0:0 as %+v; the defect is gone, go.lsp.dev's type may do", whole, atStart)
	}
}

// Defect 5: ProgressToken marshals itself only through a pointer, so
// ProgressParams (and WorkDoneProgressCreateParams) passed by value send
// the token as {}.
func TestProgressParamsByValue(t *testing.T) {
	p := protocol.ProgressParams{Token: *protocol.NewProgressToken("reika-1"), Value: "v"}
	byValue, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	byPointer, err := json.Marshal(&p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(byPointer), `{"token":"reika-1","value":"v"}`; got != want {
		t.Errorf("ProgressParams by pointer = %s, want %s", got, want)
	}
	if got := string(byValue); got != `{"token":{},"value":"v"}` {
		t.Errorf("ProgressParams by value = %s, want the token as {} (the defect the server works around)", got)
	}
}

// Defect 6: WorkspaceEdit.DocumentChanges holds only TextDocumentEdits of
// plain TextEdits: a CreateFile turns into an empty edit of no document,
// and an edit's annotationId is dropped.
// The server sends its own WorkspaceEdit (workspace_edit.go), inside its own
// code action type. window/showDocument sits on the Server interface (a
// server cannot send it through the Client dispatcher), so it goes as a
// raw call with the library's params.
func TestWorkspaceEditDocumentChanges(t *testing.T) {
	var edit protocol.WorkspaceEdit
	in := `{"documentChanges":[{"kind":"create","uri":"file:///w/new.go"},` +
		`{"textDocument":{"uri":"file:///w/a.go","version":1},"edits":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"newText":"x","annotationId":"a"}]}],` +
		`"changeAnnotations":{"a":{"label":"Reika","needsConfirmation":true}}}`
	if err := json.Unmarshal([]byte(in), &edit); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(edit)
	if err != nil {
		t.Fatal(err)
	}
	for _, lost := range []string{`"create"`, `"annotationId"`} {
		if strings.Contains(string(out), lost) {
			t.Errorf("go.lsp.dev's WorkspaceEdit kept %s: %s; the defect is gone", lost, out)
		}
	}
	if _, ok := reflect.TypeFor[protocol.Client]().MethodByName("ShowDocument"); ok {
		t.Error("protocol.Client has ShowDocument now; the raw call may go")
	}
	if _, ok := reflect.TypeFor[protocol.Server]().MethodByName("ShowDocument"); !ok {
		t.Error("protocol.Server no longer has ShowDocument")
	}
}

// LSP 3.17's position encodings are not in go.lsp.dev's 3.16 model: the
// server reads general.positionEncodings and sends positionEncoding with
// its own fields around the library's types (initialize.go).
func TestPositionEncodingNotModelled(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[protocol.ServerCapabilities](),
		reflect.TypeFor[protocol.GeneralClientCapabilities](),
	} {
		for f := range typ.Fields() {
			if strings.HasPrefix(f.Tag.Get("json"), "positionEncoding") {
				t.Errorf("%s has %s now; the local fields may go", typ, f.Name)
			}
		}
	}
}

// Defect 4: the logger and client context keys are equal, so WithClient
// replaces the logger WithLogger put in.
func TestContextKeysCollide(t *testing.T) {
	logger := zap.NewExample()
	ctx := protocol.WithLogger(context.Background(), logger)
	ctx = protocol.WithClient(ctx, protocol.ClientDispatcher(nil, zap.NewNop()))
	if protocol.LoggerFromContext(ctx) == logger {
		t.Error("the logger survives WithClient; the keys no longer collide")
	}
}

// Defect 8: one well-framed message the library cannot decode ends its
// connection, unanswered. The server reads through its own stream
// (stream.go), which answers such messages and reads on.
func TestOneBadMessageEndsTheConnection(t *testing.T) {
	for _, body := range []string{
		`this is not JSON`,
		`{"jsonrpc":"1.0","id":1,"method":"shutdown"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"shutdown"}]`,
		`{"jsonrpc":"2.0","id":1.5,"method":"shutdown"}`,
	} {
		clientSide, serverSide := net.Pipe()
		srv := jsonrpc2.NewConn(jsonrpc2.NewStream(serverSide))
		srv.Go(context.Background(), jsonrpc2.MethodNotFoundHandler)
		answered := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(clientSide)
			answered <- b
		}()
		fmt.Fprintf(clientSide, "Content-Length: %d\r\n\r\n%s", len(body), body)
		select {
		case <-srv.Done():
		case <-time.After(testslow.Scale(5 * time.Second)):
			t.Errorf("%s: the library's connection read on; the defect is gone, the server's own stream may go", body)
		}
		srv.Close()
		clientSide.Close()
		if b := <-answered; len(b) > 0 {
			t.Errorf("%s: the library answered %q", body, b)
		}
		if srv.Err() == nil {
			t.Errorf("%s: the connection ended without an error", body)
		}
	}
}

// Defect 9: a request whose id is null is taken for a notification: the
// handler runs, and the answer it gives is never sent, so the client
// waits for ever. The server's stream refuses it first (InvalidRequest,
// id null).
func TestNullIDIsANotification(t *testing.T) {
	msg, err := jsonrpc2.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":null,"method":"shutdown"}`))
	if _, ok := msg.(*jsonrpc2.Notification); !ok || err != nil {
		t.Errorf("DecodeMessage of an id null = %T, %v; want a *Notification (the defect)", msg, err)
	}

	clientSide, serverSide := net.Pipe()
	defer clientSide.Close()
	handled := make(chan string, 2)
	srv := jsonrpc2.NewConn(jsonrpc2.NewStream(serverSide))
	srv.Go(context.Background(), func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		handled <- req.Method()
		return reply(ctx, req.Method(), nil)
	})
	defer srv.Close()
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":null,"method":"first"}`,
		`{"jsonrpc":"2.0","id":2,"method":"second"}`,
	} {
		fmt.Fprintf(clientSide, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	// The connection answers in order: the first answer the client reads
	// would be the null id's, had it one.
	answer, _, err := jsonrpc2.NewStream(clientSide).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := answer.(*jsonrpc2.Response); !ok || fmt.Sprint(r.ID()) != "2" {
		t.Errorf("the first answer = %#v, want the one to id 2 (the null id's never comes)", answer)
	}
	if got := []string{<-handled, <-handled}; !reflect.DeepEqual(got, []string{"first", "second"}) {
		t.Errorf("handled %q, want both: the request with a null id ran", got)
	}
}
