package lsp_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
	"github.com/reika-lsp/reika/lsp"
)

// exit without shutdown ends the server with code 1, as LSP asks; after
// shutdown, with 0. In process, Serve says which.
func TestExitCode(t *testing.T) {
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`
	shutdown := `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`
	exit := `{"jsonrpc":"2.0","method":"exit"}`
	for _, tc := range []struct {
		name     string
		messages []string
		code     int
		serve    error
	}{
		{"exit after shutdown", []string{initialize, shutdown, exit}, 0, nil},
		{"exit without shutdown", []string{initialize, exit}, 1, lsp.ErrExitWithoutShutdown},
		{"exit before initialize", []string{exit}, 1, lsp.ErrExitWithoutShutdown},
	} {
		t.Run(tc.name+" (binary)", func(t *testing.T) {
			cmd := exec.Command(reikaBinary(t))
			dir := t.TempDir()
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "XDG_STATE_HOME=" + dir,
				"XDG_CACHE_HOME=" + dir, "REIKA_ENDPOINT=http://127.0.0.1:1/v1", "REIKA_WARMUP=0"}
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.messages {
				fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(m), m)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(testslow.Scale(10 * time.Second)):
				cmd.Process.Kill()
				t.Fatal("the server did not exit within 10s of exit")
			}
			stdin.Close()
			if got := cmd.ProcessState.ExitCode(); got != tc.code {
				t.Errorf("exit code %d, want %d", got, tc.code)
			}
		})
		t.Run(tc.name+" (Serve)", func(t *testing.T) {
			client, server := net.Pipe()
			defer client.Close()
			env := map[string]string{"REIKA_ENDPOINT": "http://127.0.0.1:1/v1", "REIKA_WARMUP": "0", "XDG_CONFIG_HOME": t.TempDir()}
			done := make(chan error, 1)
			go func() {
				done <- lsp.Serve(context.Background(), server, lsp.Options{Getenv: func(k string) string { return env[k] }, StateDir: t.TempDir(), Log: io.Discard})
			}()
			go io.Copy(io.Discard, bufio.NewReader(client))
			for _, m := range tc.messages {
				fmt.Fprintf(client, "Content-Length: %d\r\n\r\n%s", len(m), m)
			}
			select {
			case err := <-done:
				if !errors.Is(err, tc.serve) || (tc.serve == nil && err != nil) {
					t.Errorf("Serve = %v, want %v", err, tc.serve)
				}
			case <-time.After(testslow.Scale(10 * time.Second)):
				t.Fatal("Serve did not return within 10s of exit")
			}
		})
	}
}
