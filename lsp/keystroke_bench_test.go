package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/lsp"
)

// The keystroke path and the memory of open documents, measured through
// the server's real path: framed JSON-RPC written by hand on a net.Pipe to
// lsp.Serve, decoded and handled as an editor's messages are. The client
// keeps nothing of what it sends, so what the process holds is the
// server's.

// wireClient writes framed messages to a server and waits for the answers
// to its own requests; whatever else the server sends is read and dropped.
type wireClient struct {
	w       io.Writer
	id      int
	answers chan int // ids of the responses received
	done    chan error
	stop    func()
}

// close stops the server and waits for Serve to return.
func (c *wireClient) close() {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
}

// startServer serves LSP on a pipe, initialized with root as its only
// workspace folder, and returns the client end. The engine endpoint is a
// closed port and "initialized" is never sent: no session is built, so
// what is measured is the documents and the map.
func startServer(b *testing.B, root string) *wireClient {
	b.Helper()
	state := b.TempDir()
	env := map[string]string{
		"REIKA_ENDPOINT":  "http://127.0.0.1:9/v1",
		"XDG_CONFIG_HOME": filepath.Join(state, "config"),
		"XDG_STATE_HOME":  filepath.Join(state, "state"),
		"XDG_CACHE_HOME":  filepath.Join(state, "cache"),
		"XDG_DATA_HOME":   filepath.Join(state, "data"),
		"REIKA_WARMUP":    "0",
	}
	client, server := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &wireClient{w: client, answers: make(chan int, 16), done: make(chan error, 1)}
	go func() {
		c.done <- lsp.Serve(ctx, server, lsp.Options{
			Getenv:   func(k string) string { return env[k] },
			StateDir: filepath.Join(state, "sessions"),
			Log:      io.Discard,
		})
	}()
	go c.readLoop(bufio.NewReaderSize(client, 64<<10))
	c.stop = func() {
		client.Close()
		cancel()
		<-c.done
	}
	b.Cleanup(c.close)
	c.call(b, "initialize", fmt.Sprintf(`{"processId":null,"rootUri":%q,"capabilities":{}}`, "file://"+root))
	return c
}

// readLoop reads the server's messages and reports the ids of responses.
func (c *wireClient) readLoop(r *bufio.Reader) {
	for {
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				length, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m struct {
			ID     *int   `json:"id"`
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &m) == nil && m.ID != nil && m.Method == "" {
			c.answers <- *m.ID
		}
	}
}

// send writes one framed message.
func (c *wireClient) send(b *testing.B, body string) {
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		b.Fatalf("write to the server: %v", err)
	}
}

func (c *wireClient) notify(b *testing.B, method, params string) {
	c.send(b, `{"jsonrpc":"2.0","method":"`+method+`","params":`+params+`}`)
}

// call sends a request and waits for its answer, an error or not.
func (c *wireClient) call(b *testing.B, method, params string) {
	c.id++
	c.send(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.id, method, params))
	for id := range c.answers {
		if id == c.id {
			return
		}
	}
}

// sync returns once the server has handled everything sent before: it
// handles messages in order, and answers a method it does not know at
// once.
func (c *wireClient) sync(b *testing.B) { c.call(b, "reika-bench/sync", "null") }

func (c *wireClient) didOpen(b *testing.B, uri, text string) {
	q, _ := json.Marshal(text)
	c.notify(b, "textDocument/didOpen", fmt.Sprintf(`{"textDocument":{"uri":%q,"languageId":"go","version":1,"text":%s}}`, uri, q))
}

// goSource is a Go file of about size bytes, its functions named after
// tag and calling those of other files, as a package's files do.
func goSource(tag string, size int) string {
	var sb strings.Builder
	sb.WriteString("package bench\n\nimport \"fmt\"\n\n")
	for i := 0; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, "// %s%d reports whether n is worth keeping.\nfunc %s%d(n int) bool {\n\tif n > %d {\n\t\treturn Helper%d(n - 1)\n\t}\n\tfmt.Println(\"n is\", n, \"and the limit is\", %d)\n\treturn n%%2 == 0\n}\n\n", tag, i, tag, i, i, i%7, i)
	}
	return sb.String()
}

// One keystroke in a document of 5000 lines, end to end: the framed
// didChange decoded, the change applied, and whatever the server does for
// the repo map. The keystrokes alternate between typing an "x" in the
// middle of the file and deleting it; a sync every 64 bounds what is in
// flight.
func BenchmarkDidChange5000Lines(b *testing.B) {
	root := b.TempDir()
	text := goSource("F", 0)
	for i := 0; strings.Count(text, "\n") < 5000; i++ {
		text = goSource("F", len(text)+4096)
	}
	text = strings.Join(strings.SplitAfter(text, "\n")[:5000], "")
	uri := "file://" + filepath.Join(root, "big.go")
	if err := os.WriteFile(filepath.Join(root, "big.go"), []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	c := startServer(b, root)
	c.didOpen(b, uri, text)
	c.sync(b)
	const line = 2500
	version := 1
	for b.Loop() {
		version++
		var change string
		if version%2 == 0 {
			change = fmt.Sprintf(`{"range":{"start":{"line":%d,"character":1},"end":{"line":%d,"character":1}},"text":"x"}`, line, line)
		} else {
			change = fmt.Sprintf(`{"range":{"start":{"line":%d,"character":1},"end":{"line":%d,"character":2}},"text":""}`, line, line)
		}
		c.notify(b, "textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":%d},"contentChanges":[%s]}`, uri, version, change))
		if version%64 == 0 {
			c.sync(b)
		}
	}
	c.sync(b)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "didChanges/s")
	b.ReportMetric(float64(len(text)), "doc-B")
}

// The memory 500 open documents of 20 KB cost the server: Go heap in use
// and the process's resident set (which holds the C heap of the syntax
// trees too), each after a collection and per document, against the
// documents' own 20 KB. Run it alone (-benchtime=1x -run '^$') for a
// resident figure that is the server's and not an earlier benchmark's.
func BenchmarkOpen500Documents(b *testing.B) {
	const n, size = 500, 20 << 10
	root := b.TempDir()
	idle := make(chan struct{}, 1)
	lsp.OnMapIdle(func() {
		select {
		case idle <- struct{}{}:
		default:
		}
	})
	defer lsp.OnMapIdle(nil)
	var heap, rss, total float64
	for b.Loop() {
		heap0, rss0 := memNow(b)
		c := startServer(b, root)
		for i := range n {
			// Made as sent and dropped: the client holds no copy.
			text := goSource(fmt.Sprintf("P%03d_", i), size)
			c.didOpen(b, "file://"+filepath.Join(root, fmt.Sprintf("p%03d.go", i)), text)
		}
		c.sync(b)
		// What the server does in the background after a quiet spell
		// counts too: one more change, and the map catching up with it,
		// make sure the map has taken every document.
		select {
		case <-idle:
		default:
		}
		c.notify(b, "textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":2},"contentChanges":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"text":"// x\n"}]}`, "file://"+filepath.Join(root, "p000.go")))
		select {
		case <-idle:
		case <-time.After(time.Minute):
			b.Fatal("the repo map did not catch up within a minute")
		}
		heap1, rss1 := memNow(b)
		heap, rss, total = heap1-heap0, rss1-rss0, rss1
		c.close()
	}
	b.ReportMetric(heap/n, "heap-B/doc")
	b.ReportMetric(rss/n, "rss-B/doc")
	b.ReportMetric(total/(1<<20), "rss-MB")
	b.ReportMetric(size, "src-B/doc")
}

// memNow is the Go heap in use and the process's resident set, in bytes,
// after a collection that returns what it can to the system.
func memNow(b *testing.B) (heap, rss float64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			rss = float64(kb << 10)
		}
	}
	return float64(ms.HeapInuse), rss
}
