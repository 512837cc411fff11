package synth

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reika-lsp/reika/agent/replay"
)

// SourceRev is the commit whose files every recording reads, greps, lists,
// builds and edits. A recording names it in its header (Recording.Source);
// changing it changes every recording.
const SourceRev = "a1bd614c67d26180a9729233666c39d43e79e7b7"

// Names lists the recordings Generate makes, in the order of the table in
// testdata/sessions/README.md.
func Names() []string {
	names := make([]string, len(recipes))
	for i, r := range recipes {
		names[i] = r.name
	}
	return names
}

// Generate builds the recording name from src. The same src and name give
// the same recording; src is only read, so one Source serves every name.
func Generate(src *Source, name string) (*replay.Recording, error) {
	for _, r := range recipes {
		if r.name == name {
			return build(src, r), nil
		}
	}
	return nil, fmt.Errorf("no recording %q: want one of %v", name, Names())
}

// Encode writes r as testdata/sessions holds it: its JSONL form
// (replay.WriteRecording), gzipped at best compression.
func Encode(w io.Writer, r *replay.Recording) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if err := replay.WriteRecording(zw, r); err != nil {
		return err
	}
	return zw.Close()
}

// WriteFile generates the recording name from src and writes it, encoded,
// to dir/name.jsonl.gz. It returns the recording and the file's size.
func WriteFile(src *Source, dir, name string) (*replay.Recording, int, error) {
	r, err := Generate(src, name)
	if err != nil {
		return nil, 0, err
	}
	size, err := Write(dir, r)
	return r, size, err
}

// Write writes r, encoded, to dir/NAME.jsonl.gz (NAME is r.Name) and
// returns the file's size.
func Write(dir string, r *replay.Recording) (int, error) {
	var buf bytes.Buffer
	if err := Encode(&buf, r); err != nil {
		return 0, fmt.Errorf("encode %s: %w", r.Name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, r.Name+".jsonl.gz"), buf.Bytes(), 0o644); err != nil {
		return 0, err
	}
	return buf.Len(), nil
}
