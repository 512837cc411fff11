package langserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"os"
	"strconv"
	"testing"
	"time"
)

// fakeEnv, in a server's environment, makes the test binary a fake
// language server (TestMain): "mute" answers initialize, then reads
// nothing more, as a wedged server does.
const fakeEnv = "LANGSERVER_TEST_FAKE"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "mute" {
		muteServer(os.Stdin, os.Stdout)
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
