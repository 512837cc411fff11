package langserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeEnv, in a server's environment, makes the test binary a fake
// language server (TestMain): "mute" answers initialize, then reads
// nothing more, as a wedged server does; "bytes" counts positions in
// bytes (utf8Server).
const fakeEnv = "LANGSERVER_TEST_FAKE"

func TestMain(m *testing.M) {
	switch os.Getenv(fakeEnv) {
	case "mute":
		muteServer(os.Stdin, os.Stdout)
		return
	case "bytes":
		bytesServer(os.Stdin, os.Stdout)
		return
	}
	os.Exit(m.Run())
}

// muteServer answers initialize, then stops reading (until it is killed,
// or for a minute).
func muteServer(in io.Reader, out io.Writer) {
	r := textproto.NewReader(bufio.NewReader(in))
	for {
		h, err := r.ReadMIMEHeader()
		if err != nil {
			return
		}
		n, _ := strconv.Atoi(h.Get("Content-Length"))
		body := make([]byte, n)
		if _, err := io.ReadFull(r.R, body); err != nil {
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &msg)
		switch msg.Method {
		case "initialize":
			resp := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"capabilities":{}}}`, msg.ID)
			fmt.Fprintf(out, "Content-Length: %d\r\n\r\n%s", len(resp), resp)
		case "initialized":
			time.Sleep(time.Minute)
			return
		}
	}
}

// bytesServer counts positions in bytes, and says so in initialize
// (positionEncoding "utf-8") when the client offers it: its definition
// of a place is the start of the identifier written there, and no
// identifier there is no definition. A client that sent or read UTF-16
// columns on a line with non-ASCII text before the place would find
// nothing, or the wrong column.
func bytesServer(in io.Reader, out io.Writer) {
	r := textproto.NewReader(bufio.NewReader(in))
	texts := map[string]string{}
	send := func(id json.RawMessage, result any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
		fmt.Fprintf(out, "Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	for {
		h, err := r.ReadMIMEHeader()
		if err != nil {
			return
		}
		n, _ := strconv.Atoi(h.Get("Content-Length"))
		body := make([]byte, n)
		if _, err := io.ReadFull(r.R, body); err != nil {
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Capabilities struct {
					General struct {
						PositionEncodings []string `json:"positionEncodings"`
					} `json:"general"`
				} `json:"capabilities"`
				TextDocument struct {
					URI  string `json:"uri"`
					Text string `json:"text"`
				} `json:"textDocument"`
				Position struct{ Line, Character int } `json:"position"`
			} `json:"params"`
		}
		json.Unmarshal(body, &msg)
		switch msg.Method {
		case "initialize":
			caps := map[string]any{"definitionProvider": true}
			if slices.Contains(msg.Params.Capabilities.General.PositionEncodings, "utf-8") {
				caps["positionEncoding"] = "utf-8"
			}
			send(msg.ID, map[string]any{"capabilities": caps})
		case "textDocument/didOpen":
			texts[msg.Params.TextDocument.URI] = msg.Params.TextDocument.Text
		case "textDocument/definition":
			u, p := msg.Params.TextDocument.URI, msg.Params.Position
			line := strings.Split(texts[u], "\n")[min(p.Line, strings.Count(texts[u], "\n"))]
			start := min(p.Character, len(line))
			for start > 0 && isWord(line[start-1]) {
				start--
			}
			if start >= len(line) || !isWord(line[start]) {
				send(msg.ID, []any{})
				continue
			}
			pos := map[string]int{"line": p.Line, "character": start}
			send(msg.ID, []any{map[string]any{"uri": u, "range": map[string]any{"start": pos, "end": pos}}})
		case "shutdown", "textDocument/documentSymbol":
			send(msg.ID, nil)
		case "exit":
			return
		default:
			if len(msg.ID) > 0 {
				send(msg.ID, nil)
			}
		}
	}
}

func isWord(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}
