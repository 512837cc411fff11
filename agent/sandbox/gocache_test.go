package sandbox

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// cacheClient speaks to ServeGoCache as the go command does
// (cmd/go/internal/cache/prog.go): a request a line, a blank line, a
// put's body as a base64 JSON string on the next.
type cacheClient struct {
	t   *testing.T
	w   *bufio.Writer
	dec *json.Decoder
	id  int64
}

func (c *cacheClient) send(req cacheRequest, body []byte) cacheResponse {
	c.t.Helper()
	c.id++
	req.ID = c.id
	line, _ := json.Marshal(req)
	fmt.Fprintf(c.w, "%s\n\n", line)
	if body != nil {
		fmt.Fprintf(c.w, "%q\n", base64.StdEncoding.EncodeToString(body))
	}
	if err := c.w.Flush(); err != nil {
		c.t.Fatalf("writing request %d: %v", req.ID, err)
	}
	var res cacheResponse
	if err := c.dec.Decode(&res); err != nil {
		c.t.Fatalf("reading response %d: %v", req.ID, err)
	}
	if res.ID != req.ID {
		c.t.Fatalf("response ID = %d, want %d", res.ID, req.ID)
	}
	return res
}

// startCache serves ServeGoCache over pipes and returns a client, once it
// read the capabilities, and the server's result.
func startCache(t *testing.T, user, own string) (*cacheClient, <-chan GoCacheStats) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan GoCacheStats, 1)
	go func() {
		st, err := ServeGoCache(inR, outW, user, own)
		if err != nil {
			t.Errorf("ServeGoCache: %v", err)
		}
		outW.Close()
		done <- st
	}()
	t.Cleanup(func() { inW.Close() })
	c := &cacheClient{t: t, w: bufio.NewWriter(inW), dec: json.NewDecoder(outR)}
	var caps cacheResponse
	if err := c.dec.Decode(&caps); err != nil || caps.ID != 0 || len(caps.KnownCommands) != 3 {
		t.Fatalf("capabilities = %+v, %v; want get, put and close", caps, err)
	}
	return c, done
}

// plant writes an entry of Go's own cache for action into dir, with
// body as its output, and returns the output's ID.
func plant(t *testing.T, dir string, action [32]byte, body string) []byte {
	t.Helper()
	out := sha256.Sum256([]byte(body))
	for name, text := range map[string]string{
		entryName(action[:], "a"): fmt.Sprintf("v1 %x %x %20d %20d\n", action, out, len(body), time.Now().UnixNano()),
		entryName(out[:], "d"):    body,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out[:]
}

// snapshot lists the entries below dir with their sizes, modes and
// modification times.
func snapshot(t *testing.T, dir string) []string {
	t.Helper()
	var list []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		list = append(list, fmt.Sprintf("%s %d %v %d", rel, fi.Size(), fi.Mode(), fi.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestGoCacheLayers drives the cache program over pipes: a miss, a hit in
// the user's cache answered with the user's file and nothing written
// there, a put into the own cache read back, and puts whose body is not
// the declared one refused and not stored.
func TestGoCacheLayers(t *testing.T) {
	user, own := t.TempDir(), t.TempDir()
	fromUser := plant(t, user, [32]byte{1}, "the user's build of fmt")
	plant(t, user, [32]byte{2}, "an output cut short")
	short := sha256.Sum256([]byte("an output cut short"))
	if err := os.Truncate(filepath.Join(user, entryName(short[:], "d")), 3); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, user)
	c, done := startCache(t, user, own)

	if res := c.send(cacheRequest{Command: "get", ActionID: make([]byte, 32)}, nil); !res.Miss || res.Err != "" {
		t.Errorf("get of an unknown action = %+v, want a miss", res)
	}
	res := c.send(cacheRequest{Command: "get", ActionID: pad(1)}, nil)
	if want := filepath.Join(user, entryName(fromUser, "d")); res.Miss || res.DiskPath != want || string(res.OutputID) != string(fromUser) || res.Size != 23 {
		t.Errorf("get of the user's action = %+v, want %s, %d bytes", res, want, 23)
	}
	if res := c.send(cacheRequest{Command: "get", ActionID: pad(2)}, nil); !res.Miss {
		t.Errorf("get of a user's action whose output is cut short = %+v, want a miss", res)
	}

	body := []byte("the sandbox's build of a package")
	sum := sha256.Sum256(body)
	res = c.send(cacheRequest{Command: "put", ActionID: pad(3), OutputID: sum[:], BodySize: int64(len(body))}, body)
	if res.Err != "" || !strings.HasPrefix(res.DiskPath, own+string(filepath.Separator)) {
		t.Fatalf("put = %+v, want a DiskPath in %s", res, own)
	}
	res = c.send(cacheRequest{Command: "get", ActionID: pad(3)}, nil)
	if got, err := os.ReadFile(res.DiskPath); err != nil || string(got) != string(body) || string(res.OutputID) != string(sum[:]) {
		t.Errorf("get after put = %+v, its file %q, %v; want %q", res, got, err, body)
	}

	bad := []struct {
		name string
		req  cacheRequest
		body []byte
	}{
		{"shorter than declared", cacheRequest{Command: "put", ActionID: pad(4), OutputID: sum[:], BodySize: int64(len(body)) + 10}, body},
		{"longer than declared", cacheRequest{Command: "put", ActionID: pad(5), OutputID: sum[:], BodySize: 5}, body},
		{"not its OutputID", cacheRequest{Command: "put", ActionID: pad(6), OutputID: pad(9), BodySize: int64(len(body))}, body},
	}
	for _, b := range bad {
		if res := c.send(b.req, b.body); res.Err == "" {
			t.Errorf("put %s = %+v, want it refused", b.name, res)
		}
		if res := c.send(cacheRequest{Command: "get", ActionID: b.req.ActionID}, nil); !res.Miss {
			t.Errorf("get after a put %s = %+v, want a miss", b.name, res)
		}
	}
	if res := c.send(cacheRequest{Command: "close"}, nil); res.Err != "" {
		t.Errorf("close = %+v", res)
	}
	st := <-done
	if want := (GoCacheStats{OwnHits: 1, UserHits: 1, Misses: 5, Puts: 1, Refused: 3}); st != want {
		t.Errorf("stats = %+v, want %+v", st, want)
	}
	if diff := cmp.Diff(before, snapshot(t, user)); diff != "" {
		t.Errorf("the user's cache changed (-before +after):\n%s", diff)
	}
	if tmps, _ := filepath.Glob(filepath.Join(own, "*", ".tmp-*")); len(tmps) > 0 {
		t.Errorf("temporary files left in the own cache: %v", tmps)
	}
}

// pad is an ID of 32 bytes starting with b.
func pad(b byte) []byte {
	id := make([]byte, 32)
	id[0] = b
	return id
}

// TestGoCacheSymlinkOut plants a symbolic link in the own cache, where a
// contained command can, pointing out of it: a put through it is refused
// and writes nothing where it points.
func TestGoCacheSymlinkOut(t *testing.T) {
	own, outside := t.TempDir(), t.TempDir()
	body := []byte("an output")
	sum := sha256.Sum256(body)
	if err := os.Symlink(outside, filepath.Join(own, fmt.Sprintf("%02x", sum[0]))); err != nil {
		t.Fatal(err)
	}
	c, done := startCache(t, "", own)
	if res := c.send(cacheRequest{Command: "put", ActionID: pad(1), OutputID: sum[:], BodySize: int64(len(body))}, body); res.Err == "" {
		t.Errorf("put through a link out of the own cache = %+v, want it refused", res)
	}
	c.send(cacheRequest{Command: "close"}, nil)
	<-done
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("the put wrote %v out of the own cache", entries)
	}
}

// parseEntry reads the entries Go's cache writes and refuses the others.
func TestParseEntry(t *testing.T) {
	id, out := pad(7), pad(8)
	good := fmt.Sprintf("v1 %x %x %20d %20d\n", id, out, 42, 1700000000000000000)
	tests := []struct {
		name, text string
		ok         bool
	}{
		{"go's", good, true},
		{"another action's", fmt.Sprintf("v1 %x %x %20d %20d\n", out, out, 42, 1), false},
		{"no newline", good[:len(good)-1] + " ", false},
		{"a negative size", fmt.Sprintf("v1 %x %x %20d %20d\n", id, out, -42, 1), false},
		{"not hex", strings.Replace(good, fmt.Sprintf("%x", out), strings.Repeat("zz", 32), 1), false},
		{"v2", "v2" + good[2:], false},
		{"short", good[:100], false},
	}
	for _, tc := range tests {
		e, ok := parseEntry([]byte(tc.text), id)
		if ok != tc.ok {
			t.Errorf("parseEntry(%s) = %v, want %v", tc.name, ok, tc.ok)
		}
		if ok && (e.size != 42 || string(e.outputID) != string(out) || e.time.UnixNano() != 1700000000000000000) {
			t.Errorf("parseEntry(%s) = %+v", tc.name, e)
		}
	}
}

// FuzzParseEntry checks that parseEntry never fails on any bytes and
// reads back every entry written in Go's format.
func FuzzParseEntry(f *testing.F) {
	f.Add([]byte{7}, int64(42), int64(1700000000000000000), []byte("v1 junk\n"))
	f.Fuzz(func(t *testing.T, idb []byte, size, unix int64, junk []byte) {
		id := make([]byte, 32)
		copy(id, idb)
		parseEntry(junk, id)
		if size < 0 || unix < 0 {
			return
		}
		text := fmt.Sprintf("v1 %x %x %20d %20d\n", id, id, size, unix)
		if e, ok := parseEntry([]byte(text), id); !ok || e.size != size || e.time.UnixNano() != unix {
			t.Errorf("parseEntry(%q) = %+v, %v", text, e, ok)
		}
	})
}
