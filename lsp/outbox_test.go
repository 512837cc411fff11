package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// A client that does not read while it writes (its reader busy answering
// the server, as the library's reader is when it replies) must not stop
// the server from reading: the server's answers wait in its outbox. Over
// net.Pipe, which has no buffer, this is deterministic: before the outbox
// the second request's write waited for ever, because the server's reader
// was writing the first answer, which nobody read (issue 39).
func TestServerReadsWhileClientDoesNotRead(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	env := map[string]string{"REIKA_ENDPOINT": "http://127.0.0.1:1/v1", "REIKA_WARMUP": "0", "XDG_CONFIG_HOME": t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, server, Options{Getenv: func(k string) string { return env[k] }, StateDir: t.TempDir(), Log: io.Discard})
	}()
	wait := testslow.Scale(5 * time.Second)
	send := func(body string) error {
		client.SetWriteDeadline(time.Now().Add(wait))
		_, err := fmt.Fprintf(client, "Content-Length: %d\r\n\r\n%s", len(body), body)
		return err
	}
	in := bufio.NewReader(client)
	if err := send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}`); err != nil {
		t.Fatal(err)
	}
	if id, _ := readAnswer(t, client, in, wait); id != "0" {
		t.Fatalf("the first answer is to id %s, want 0 (initialize)", id)
	}
	if err := send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`); err != nil {
		t.Fatal(err)
	}

	// Each request is answered by the server's reader itself (the method
	// is unknown); the client reads none of the answers until it has sent
	// them all.
	const n = 200
	for i := 1; i <= n; i++ {
		if err := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"reika-test/unknown"}`, i)); err != nil {
			t.Fatalf("request %d of %d: %v: the server stopped reading while its answers went unread", i, n, err)
		}
	}
	for i := 1; i <= n; i++ {
		id, code := readAnswer(t, client, in, wait)
		if id != fmt.Sprint(i) || code != -32601 {
			t.Fatalf("answer %d: id %s, code %d; want id %d, MethodNotFound (-32601), in order", i, id, code, i)
		}
	}

	if err := send(`{"jsonrpc":"2.0","id":"bye","method":"shutdown"}`); err != nil {
		t.Fatal(err)
	}
	if id, _ := readAnswer(t, client, in, wait); id != `"bye"` {
		t.Fatalf("the answer to shutdown has id %s", id)
	}
	if err := send(`{"jsonrpc":"2.0","method":"exit"}`); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Serve did not return after exit")
	}
}

// readAnswer reads messages until an answer (no method) and returns its
// id and error code (0 for a result); the server's notifications and
// requests before it are skipped.
func readAnswer(t *testing.T, c net.Conn, in *bufio.Reader, wait time.Duration) (id string, code int) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(wait))
	for {
		length, _, err := (&stream{in: in}).readHeader()
		if err != nil {
			t.Fatalf("reading the server's next message: %v", err)
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(in, body); err != nil {
			t.Fatalf("reading the server's next message: %v", err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("the server sent %s: %v", body, err)
		}
		if m.Method != "" {
			continue
		}
		if m.Error != nil {
			code = m.Error.Code
		}
		return string(m.ID), code
	}
}

// The outbox takes every write at once while nobody reads, writes them in
// order when the other end reads, sends what is queued when closed, and
// refuses writes after a close or a failed write.
func TestOutbox(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	o := newOutbox(a, nil)
	var want strings.Builder
	for i := range 1000 {
		line := fmt.Sprintf("message %d\n", i)
		want.WriteString(line)
		if _, err := o.Write([]byte(line)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	got := make(chan string, 1)
	go func() {
		all, _ := io.ReadAll(b)
		got <- string(all)
	}()
	if err := o.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	select {
	case all := <-got:
		if all != want.String() {
			t.Errorf("the other end read %d bytes, want the %d written, in order", len(all), want.Len())
		}
	case <-time.After(testslow.Scale(5 * time.Second)):
		t.Fatal("the other end did not see the outbox close")
	}
	if _, err := o.Write([]byte("late")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("Write after Close = %v, want io.ErrClosedPipe", err)
	}

	// The other end goes away: the write fails, and so does every one
	// after it.
	c, d := net.Pipe()
	d.Close()
	o = newOutbox(c, nil)
	o.Write([]byte("lost"))
	deadline := time.Now().Add(testslow.Scale(5 * time.Second))
	for {
		_, err := o.Write([]byte("after"))
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("writes still succeed after the other end closed")
		}
		time.Sleep(time.Millisecond)
	}
	o.Close()
}

// Close waits at most flushGrace for an end that does not read, then
// closes the connection anyway.
func TestOutboxCloseUnread(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	o := newOutbox(a, nil)
	o.Write([]byte("nobody reads this"))
	start := time.Now()
	o.Close()
	if took := time.Since(start); took > 2*flushGrace+testslow.Scale(5*time.Second) {
		t.Errorf("Close took %v with an end that does not read", took)
	}
	if _, err := b.Write([]byte("x")); err == nil {
		t.Error("the connection is still open after Close")
	}
}
