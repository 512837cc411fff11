package main

import (
	"os"
	"strings"
	"testing"
)

// readmeCommands returns the lines of README.md's first code block: the
// two commands a new user runs.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```sh\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no ```sh code block")
	}
	return strings.Split(strings.TrimSpace(block), "\n")
}

// The README starts with exactly two commands; CI runs the second one
// verbatim, and the first one works (demoRun: in full under the build tag
// long, shorter by default).
func TestREADMECommands(t *testing.T) {
	cmds := readmeCommands(t)
	if len(cmds) != 2 {
		t.Fatalf("README's first block has %d lines %q, want two commands", len(cmds), cmds)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "\n"+cmds[1]+"\n") {
		t.Errorf(".ci/run does not run the README's test command %q verbatim", cmds[1])
	}

	main, ok := strings.CutPrefix(cmds[0], "go run ./cmd/reika-lsp ")
	if !ok || strings.Fields(main)[0] != "demo" {
		t.Fatalf("README's first command %q does not run ./cmd/reika-lsp demo", cmds[0])
	}
	demoRun(t)
}
