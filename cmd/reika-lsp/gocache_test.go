package main

import (
	"bytes"
	"strings"
	"testing"
)

// The sandbox's cache program is reached by its name and not listed.
func TestGoCacheCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"gocache"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--own") {
		t.Errorf("reika-lsp gocache = %d, %q; want 2 and --own asked for", code, stderr.String())
	}
	usage(&stdout)
	if strings.Contains(stdout.String(), "gocache") {
		t.Errorf("the usage lists the hidden gocache command:\n%s", stdout.String())
	}
}
