package sandbox

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// GoCacheCommand is the hidden subcommand of reika-lsp that serves Go's
// build cache to a contained go command through GOCACHEPROG (Go 1.24 and
// later): "reika-lsp gocache --user DIR --own DIR". Private names it.
const GoCacheCommand = "gocache"

// The protocol is cmd/go/internal/cacheprog's: JSON requests on stdin, one
// a line, a put's body after its request as a base64 JSON string; JSON
// responses on stdout, the first one listing the commands served.
type (
	cacheRequest struct {
		ID       int64
		Command  string
		ActionID []byte `json:",omitempty"`
		OutputID []byte `json:",omitempty"`
		BodySize int64  `json:",omitempty"`
	}
	cacheResponse struct {
		ID            int64
		Err           string     `json:",omitempty"`
		KnownCommands []string   `json:",omitempty"`
		Miss          bool       `json:",omitempty"`
		OutputID      []byte     `json:",omitempty"`
		Size          int64      `json:",omitempty"`
		Time          *time.Time `json:",omitempty"`
		DiskPath      string     `json:",omitempty"`
	}
)

const (
	hashSize = sha256.Size // an action or output ID
	// entrySize is the length of an action entry in Go's on-disk cache:
	// "v1 <action hex> <output hex> <size, 20 wide> <unix nanoseconds, 20 wide>\n".
	entrySize = 2 + 1 + 2*hashSize + 1 + 2*hashSize + 1 + 20 + 1 + 20 + 1
	// maxRequestLine bounds a request's line; a real one is about 150 bytes.
	maxRequestLine = 64 << 10
	// usedInterval is how stale an own entry's time may be before a get
	// marks it used again, as Go's cache does, for trimming by age.
	usedInterval = time.Hour
)

// RunGoCache runs the cache program with args (--user DIR --own DIR) on
// stdin and stdout, and returns the exit code. Errors go to stderr, which
// the go command shows.
func RunGoCache(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reika-lsp "+GoCacheCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.String("user", "", "the user's GOCACHE, read only")
	own := fs.String("own", "", "Reika's own GOCACHE for this workspace, where puts go")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *own == "" {
		fmt.Fprintln(stderr, "reika-lsp gocache: --own is required")
		return 2
	}
	if _, err := ServeGoCache(stdin, stdout, *user, *own); err != nil {
		fmt.Fprintf(stderr, "reika-lsp gocache: %v\n", err)
		return 1
	}
	return 0
}

// GoCacheStats counts what a ServeGoCache answered.
type GoCacheStats struct {
	OwnHits, UserHits, Misses, Puts, Refused int
}

// ServeGoCache answers the go command's cache requests read from in on
// out until a close request or the end of in. A get is answered from own,
// Reika's cache of this workspace, first, else from user, the user's
// GOCACHE, which is only read: its output file is the answer's DiskPath
// when its size is the entry's. A put goes into own only, its body
// streamed to a temporary file there, its size and its OutputID (the
// SHA-256 of the body, as the go command computes it) checked before it is
// renamed into place; a put that fails them is refused and stores nothing.
// Both are opened as an os.Root, so no symbolic link takes a read or a
// write out of them. An empty or missing user leaves the user's layer out.
func ServeGoCache(in io.Reader, out io.Writer, user, own string) (GoCacheStats, error) {
	var st GoCacheStats
	c, err := openLayers(user, own)
	if err != nil {
		return st, err
	}
	defer c.close()
	r := bufio.NewReaderSize(in, maxRequestLine)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	reply := func(res cacheResponse) error {
		if err := enc.Encode(res); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := reply(cacheResponse{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return st, err
	}
	for {
		req, err := readRequest(r)
		if errors.Is(err, io.EOF) {
			return st, nil
		}
		if err != nil {
			return st, err
		}
		res := cacheResponse{ID: req.ID}
		switch req.Command {
		case "get":
			c.get(req, &res, &st)
		case "put":
			if err := c.put(r, req, &res); err != nil {
				return st, err
			}
			if res.Err != "" {
				st.Refused++
			} else {
				st.Puts++
			}
		case "close":
			return st, reply(res)
		default:
			res.Err = fmt.Sprintf("unknown command %q", req.Command)
		}
		if err := reply(res); err != nil {
			return st, err
		}
	}
}

// readRequest reads the next request line, skipping blank ones.
func readRequest(r *bufio.Reader) (cacheRequest, error) {
	var req cacheRequest
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return req, fmt.Errorf("a request longer than %d bytes", maxRequestLine)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return req, err
			}
			continue
		}
		if err := json.Unmarshal(line, &req); err != nil {
			return req, fmt.Errorf("reading a request: %w", err)
		}
		return req, nil
	}
}

// layers are the two caches ServeGoCache answers from.
type layers struct {
	ownDir, userDir string
	own, user       *os.Root // user is nil when there is none
}

func openLayers(user, own string) (*layers, error) {
	ownRoot, err := os.OpenRoot(own)
	if err != nil {
		return nil, fmt.Errorf("opening the own cache: %w", err)
	}
	c := &layers{ownDir: own, own: ownRoot}
	if user != "" {
		if c.user, err = os.OpenRoot(user); err != nil {
			c.user = nil // no user's cache: every get it would answer misses
		}
		c.userDir = user
	}
	return c, nil
}

func (c *layers) close() {
	c.own.Close()
	if c.user != nil {
		c.user.Close()
	}
}

// get answers a get from own, else from the user's cache, else a miss.
func (c *layers) get(req cacheRequest, res *cacheResponse, st *GoCacheStats) {
	if len(req.ActionID) != hashSize {
		res.Err = "get: an ActionID is 32 bytes"
		return
	}
	if e, ok := lookup(c.own, req.ActionID); ok {
		if fi, err := c.own.Stat(entryName(req.ActionID, "a")); err == nil && time.Since(fi.ModTime()) > usedInterval {
			now := time.Now()
			c.own.Chtimes(entryName(req.ActionID, "a"), now, now)
		}
		e.answer(res, c.ownDir)
		st.OwnHits++
		return
	}
	if c.user != nil {
		if e, ok := lookup(c.user, req.ActionID); ok {
			e.answer(res, c.userDir)
			st.UserHits++
			return
		}
	}
	res.Miss = true
	st.Misses++
}

// An entry is an action entry whose output file is there with its size.
type entry struct {
	outputID []byte
	size     int64
	time     time.Time
}

func (e entry) answer(res *cacheResponse, dir string) {
	res.OutputID, res.Size, res.Time = e.outputID, e.size, &e.time
	res.DiskPath = filepath.Join(dir, entryName(e.outputID, "d"))
}

// entryName is where Go's cache keeps id's file of kind "a" (the action
// entry) or "d" (the output): "<first byte hex>/<id hex>-<kind>".
func entryName(id []byte, kind string) string {
	return fmt.Sprintf("%02x/%x-%s", id[0], id, kind)
}

// lookup reads id's action entry in root and checks its output file.
func lookup(root *os.Root, id []byte) (entry, bool) {
	f, err := root.Open(entryName(id, "a"))
	if err != nil {
		return entry{}, false
	}
	defer f.Close()
	var b [entrySize + 1]byte
	if n, _ := io.ReadFull(f, b[:]); n != entrySize {
		return entry{}, false
	}
	e, ok := parseEntry(b[:entrySize], id)
	if !ok {
		return entry{}, false
	}
	fi, err := root.Stat(entryName(e.outputID, "d"))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != e.size {
		return entry{}, false
	}
	return e, true
}

// parseEntry reads an action entry of Go's cache for id, its fields at
// their fixed places.
func parseEntry(b, id []byte) (entry, bool) {
	const hexSize = 2 * hashSize
	at := func(i int, c byte) bool { return b[i] == c }
	if len(b) != entrySize || string(b[:3]) != "v1 " || !at(3+hexSize, ' ') || !at(4+2*hexSize, ' ') ||
		!at(5+2*hexSize+20, ' ') || !at(entrySize-1, '\n') || string(b[3:3+hexSize]) != hex.EncodeToString(id) {
		return entry{}, false
	}
	out, err := hex.DecodeString(string(b[4+hexSize : 4+2*hexSize]))
	number := func(f []byte) int64 {
		n, err := strconv.ParseInt(strings.TrimLeft(string(f), " "), 10, 64)
		if err != nil || n < 0 {
			return -1
		}
		return n
	}
	size, unix := number(b[5+2*hexSize:5+2*hexSize+20]), number(b[6+2*hexSize+20:entrySize-1])
	if err != nil || size < 0 || unix < 0 {
		return entry{}, false
	}
	return entry{outputID: out, size: size, time: time.Unix(0, unix)}, true
}

// put stores a put's body and entry in own. A body that is not what the
// request says is refused in res.Err; an error means the stream is broken.
func (c *layers) put(r *bufio.Reader, req cacheRequest, res *cacheResponse) error {
	if req.BodySize < 0 {
		return fmt.Errorf("put: a negative BodySize %d", req.BodySize)
	}
	body := io.Reader(bytes.NewReader(nil))
	var rest *untilQuote
	if req.BodySize > 0 {
		var err error
		if rest, err = openBody(r); err != nil {
			return err
		}
		body = base64.NewDecoder(base64.StdEncoding, rest)
	}
	name, err := c.store(body, req)
	if rest != nil {
		if _, derr := io.Copy(io.Discard, rest); derr != nil {
			return fmt.Errorf("put: reading the body: %w", derr)
		}
	}
	if err != nil {
		res.Err = "put: " + err.Error()
		return nil
	}
	res.DiskPath = filepath.Join(c.ownDir, name)
	return nil
}

// store writes body as req's output and then req's action entry into own,
// each through a temporary file renamed into place, the output only once
// its size and hash are the declared ones, and returns the output's name.
func (c *layers) store(body io.Reader, req cacheRequest) (string, error) {
	if len(req.ActionID) != hashSize || len(req.OutputID) != hashSize {
		return "", errors.New("an ActionID and an OutputID are 32 bytes")
	}
	h := sha256.New()
	name := entryName(req.OutputID, "d")
	tmp, size, err := c.writeTemp(name, io.TeeReader(io.LimitReader(body, req.BodySize+1), h))
	if err != nil {
		return "", err
	}
	if size != req.BodySize || !bytes.Equal(h.Sum(nil), req.OutputID) {
		c.own.Remove(tmp)
		return "", fmt.Errorf("the body is not the one declared (%d bytes, output %x)", req.BodySize, req.OutputID)
	}
	if err := c.rename(tmp, name); err != nil {
		return "", err
	}
	line := fmt.Sprintf("v1 %x %x %20d %20d\n", req.ActionID, req.OutputID, size, time.Now().UnixNano())
	aname := entryName(req.ActionID, "a")
	if tmp, _, err = c.writeTemp(aname, strings.NewReader(line)); err != nil {
		return "", err
	}
	return name, c.rename(tmp, aname)
}

// writeTemp writes what r gives to a new temporary file in own beside
// name and returns its name and how many bytes r gave; on an error it
// leaves nothing.
func (c *layers) writeTemp(name string, r io.Reader) (string, int64, error) {
	if err := c.own.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return "", 0, err
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(name), ".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := c.own.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", 0, err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		c.own.Remove(tmp)
		return "", n, err
	}
	return tmp, n, nil
}

// rename moves tmp to name in own, or removes it.
func (c *layers) rename(tmp, name string) error {
	err := c.own.Rename(tmp, name)
	if err != nil {
		c.own.Remove(tmp)
	}
	return err
}

// untilQuote reads a JSON string's content up to its closing quote,
// which it consumes.
type untilQuote struct {
	r    *bufio.Reader
	done bool
}

// openBody skips the blank lines before a put's body and its opening
// quote.
func openBody(r *bufio.Reader) (*untilQuote, error) {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("put: reading the body: %w", err)
		}
		switch b {
		case '\n', '\r', ' ', '\t':
			continue
		case '"':
			return &untilQuote{r: r}, nil
		default:
			return nil, fmt.Errorf("put: the body starts with %q, not a JSON string", b)
		}
	}
}

func (u *untilQuote) Read(p []byte) (int, error) {
	if u.done {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if _, err := u.r.Peek(1); err != nil {
		return 0, io.ErrUnexpectedEOF
	}
	buf, _ := u.r.Peek(min(len(p), u.r.Buffered()))
	if i := bytes.IndexByte(buf, '"'); i >= 0 {
		n := copy(p, buf[:i])
		u.r.Discard(i + 1)
		u.done = true
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
	n := copy(p, buf)
	u.r.Discard(n)
	return n, nil
}
