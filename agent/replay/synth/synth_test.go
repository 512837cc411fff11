package synth

import (
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reika-lsp/reika/agent/replay"
)

var all = flag.Bool("all", false, "compare every recording with its file, not only many-small (about half a minute)")

// sessionsDir holds the recordings, from this package.
const sessionsDir = "../../../testdata/sessions"

// TestGenerateMatchesFile regenerates recordings and compares them with
// testdata/sessions: many-small by default (the cheapest, a few seconds),
// all four with -all; -short skips it. It compares the JSONL text; the
// gzip bytes are compared where they match today, which is every file but
// engine-cached-tokens (recompressed by another tool since; its text is
// the generator's).
func TestGenerateMatchesFile(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerating reads the repository at SourceRev through git archive")
	}
	src := testSource(t)
	names := []string{"many-small"}
	if *all {
		names = Names()
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			rec, err := Generate(src, name)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := replay.WriteRecording(&got, rec); err != nil {
				t.Fatal(err)
			}
			want := gunzipFile(t, filepath.Join(sessionsDir, name+".jsonl.gz"))
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("Generate(%s) differs from its file (%d bytes, want %d): regenerate with go run ./cmd/reika-gensessions, or find what changed the generator", name, got.Len(), len(want))
			}
			if name != "engine-cached-tokens" {
				checkEncoded(t, rec, filepath.Join(sessionsDir, name+".jsonl.gz"))
			}
		})
	}
}

func TestGenerateUnknown(t *testing.T) {
	if _, err := Generate(&Source{}, "nope"); err == nil {
		t.Errorf("Generate(nope) = nil error, want one naming the recordings")
	}
}

var (
	loadOnce sync.Once
	loaded   *Source
	loadErr  error
)

// testSource loads the repository at SourceRev once for the package's
// tests, or skips them when git or the commit is missing (a shallow clone).
func testSource(t *testing.T) *Source {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if err := exec.Command("git", "-C", "../../..", "cat-file", "-e", SourceRev+"^{commit}").Run(); err != nil {
		t.Skipf("commit %s is not in this clone", SourceRev)
	}
	loadOnce.Do(func() { loaded, loadErr = LoadSource("../../..", SourceRev) })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded
}

// checkEncoded encodes rec twice and checks that both give the bytes of
// the file name, gzip framing included.
func checkEncoded(t *testing.T, rec *replay.Recording, name string) {
	t.Helper()
	file, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		var b bytes.Buffer
		if err := Encode(&b, rec); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), file) {
			t.Errorf("Encode(%s) #%d = %d bytes, not the %d of its file", rec.Name, i+1, b.Len(), len(file))
		}
	}
}

// gunzipFile is the decompressed content of the file name.
func gunzipFile(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
