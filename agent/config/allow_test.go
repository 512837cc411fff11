package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAllowAlways(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "reika", "config.json")
	if err := AllowAlways(path, "go test"); err != nil {
		t.Fatalf("AllowAlways(new file) = %v", err)
	}
	if err := os.WriteFile(path, []byte(`{"profile": "local", "profiles": {"local": {"endpoint": "http://127.0.0.1:8080/v1"}}, "bash_allow": ["ls"]}`), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o640)
	for _, e := range []string{"go test", "make check", "go test"} {
		if err := AllowAlways(path, e); err != nil {
			t.Fatalf("AllowAlways(%q) = %v", e, err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(path, data)
	if err != nil {
		t.Fatalf("the file no longer parses: %v\n%s", err, data)
	}
	if d := cmp.Diff([]string{"ls", "go test", "make check"}, f.BashAllow); d != "" {
		t.Errorf("bash_allow (-want +got):\n%s", d)
	}
	if f.ActiveProfile != "local" || f.Profiles["local"].Endpoint != "http://127.0.0.1:8080/v1" {
		t.Errorf("other keys changed: %s", data)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", st.Mode().Perm())
	}
	// A file the resolver could not read is left alone.
	bad := []byte(`{"bash_alow": []}`)
	os.WriteFile(path, bad, 0o600)
	if err := AllowAlways(path, "x"); err == nil {
		t.Errorf("AllowAlways(unreadable file) = nil, want an error")
	}
	if got, _ := os.ReadFile(path); string(got) != string(bad) {
		t.Errorf("an unreadable file was rewritten: %s", got)
	}
}
