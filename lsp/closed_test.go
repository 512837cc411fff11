package lsp

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// The errors a stream gives once it is closed — a pipe, a socket, a file
// such as stdin — read through the JSON-RPC stream as the connection
// reads them, all count as closed; another failure does not, whatever its
// words.
func TestIsClosed(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) (stream io.ReadWriteCloser, closeIt func())
	}{
		{"net.Pipe", func(t *testing.T) (io.ReadWriteCloser, func()) {
			a, b := net.Pipe()
			t.Cleanup(func() { b.Close() })
			return a, func() { a.Close() }
		}},
		{"socket", func(t *testing.T) (io.ReadWriteCloser, func()) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			return c, func() { c.Close() }
		}},
		{"os pipe", func(t *testing.T) (io.ReadWriteCloser, func()) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			return fileStream{r, w}, func() { r.Close() }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream, closeIt := tc.open(t)
			closeIt()
			_, _, err := jsonrpc2.NewStream(stream).Read(context.Background())
			if err == nil || !isClosed(err) {
				t.Errorf("isClosed(%v) = false, want true", err)
			}
		})
	}
	for _, err := range []error{io.ErrUnexpectedEOF, errors.New("use of closed network connection, in words only")} {
		if isClosed(err) {
			t.Errorf("isClosed(%v) = true, want false", err)
		}
	}
}

// fileStream reads one file and writes another, as stdin and stdout.
type fileStream struct{ r, w *os.File }

func (f fileStream) Read(p []byte) (int, error)  { return f.r.Read(p) }
func (f fileStream) Write(p []byte) (int, error) { return f.w.Write(p) }
func (f fileStream) Close() error                { return f.r.Close() }
