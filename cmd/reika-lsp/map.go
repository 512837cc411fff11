package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/contextwin"
	"github.com/reika-lsp/reika/repomap"
)

// defaultMapWindow is the window whose share is the map's budget when no
// flag or setting gives one.
const defaultMapWindow = 32768

// maxMapFileBytes is the largest file `map` reads; bigger ones are
// skipped. (The map itself lists files over repomap.MaxParseBytes by
// name.)
const maxMapFileBytes = 8 << 20

// skipDirs are directories `map` does not descend into.
var skipDirs = []string{".git", ".hg", ".svn", "node_modules"}

func runMap(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return mapMain(ctx, args, os.Getenv, stdout, stderr)
}

func mapMain(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("map", flag.ContinueOnError)
	fs.SetOutput(stderr)
	budget := fs.Int("budget", 0, "the map's size in characters (bytes)")
	windowFlag := fs.String("window", "", fmt.Sprintf("context window in tokens (32768 or 32k) whose share is the budget: 5%% at 4 chars a token, within 3200…12000 (default %d)", defaultMapWindow))
	var focus stringList
	fs.Var(&focus, "focus", "a file the user works in, weighted up; repeat, or separate with commas, for several")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reika-lsp map [--budget N | --window W] [--focus FILE…] FILE|DIR…")
		fmt.Fprintln(stderr, "\nPrints the repo map the model would get for these files: their definitions,")
		fmt.Fprintln(stderr, "ranked by how much the other files use them, in the budget. Directories are")
		fmt.Fprintln(stderr, "read recursively, without .git, .hg, .svn and node_modules, and files over")
		fmt.Fprintf(stderr, "%d MiB. The budget is --budget, else the share of --window, else\n", maxMapFileBytes>>20)
		fmt.Fprintf(stderr, "REIKA_REPO_MAP_BUDGET, else the share of a %d-token window.\n\n", defaultMapWindow)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	chars, err := mapBudget(*budget, set["budget"], *windowFlag, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp map: %v\n", err)
		return 2
	}

	paths, skipped, err := mapFiles(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp map: %v\n", err)
		return 1
	}
	m := repomap.New()
	defer m.Close()
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(stderr, "reika-lsp map: %v\n", err)
			return 1
		}
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(stderr, "reika-lsp map: %v\n", err)
			return 1
		}
		m.Update(filepath.ToSlash(p), data)
	}
	for i, f := range focus {
		focus[i] = filepath.ToSlash(filepath.Clean(f))
	}
	m.SetFocus(focus...)
	text := m.Render(chars)
	io.WriteString(stdout, text)
	fmt.Fprintf(stderr, "reika-lsp map: %s, %d of %d chars", fileCount(len(paths)), len(text), chars)
	if skipped > 0 {
		fmt.Fprintf(stderr, "; %s over %d MiB skipped", fileCount(skipped), maxMapFileBytes>>20)
	}
	if n := timedOut(m); n > 0 {
		fmt.Fprintf(stderr, "; %s whose parse %s", fileCount(n), repomap.NoteTimedOut)
	}
	fmt.Fprintln(stderr)
	return 0
}

// timedOut counts the files whose parse ran over the map's time limit
// (a busy machine): the map lists them by name only.
func timedOut(m *repomap.Map) int {
	n := 0
	for _, f := range m.Files() {
		if f.Note == repomap.NoteTimedOut {
			n++
		}
	}
	return n
}

func fileCount(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// mapBudget is the map's budget in characters: --budget, else the share of
// --window, else what the server would give it in the default window
// (REIKA_REPO_MAP_BUDGET, else the window's share): contextwin decides.
func mapBudget(budget int, budgetSet bool, window string, getenv func(string) string) (int, error) {
	switch {
	case budgetSet:
		if budget < 0 {
			return 0, fmt.Errorf("--budget %d: want a number of characters, 0 or more", budget)
		}
		return budget, nil
	case window != "":
		w, err := parseTokens(window)
		if err != nil {
			return 0, fmt.Errorf("--window: %v", err)
		}
		if w < contextwin.MinWindow || w > contextwin.MaxWindow {
			return 0, fmt.Errorf("--window %d is out of range: want %d to %d tokens", w, contextwin.MinWindow, contextwin.MaxWindow)
		}
		return contextwin.Config{Window: w}.RepoMapBudget(), nil
	}
	s := config.Resolve(config.Inputs{Env: getenv})
	if len(s.Warnings) > 0 {
		return 0, fmt.Errorf("%s", s.Warnings[0])
	}
	return contextwin.Config{Window: defaultMapWindow, MapChars: s.RepoMapBudget.Value, MapCharsSet: s.RepoMapBudget.IsSet()}.RepoMapBudget(), nil
}

// mapFiles lists the files named by args, directories expanded, each
// once, in a fixed order; files over maxMapFileBytes are counted, not
// listed.
func mapFiles(args []string) (paths []string, skipped int, err error) {
	seen := map[string]bool{}
	add := func(p string, size int64) {
		p = filepath.Clean(p)
		switch {
		case seen[p]:
		case size > maxMapFileBytes:
			skipped++
		default:
			paths = append(paths, p)
		}
		seen[p] = true
	}
	for _, arg := range args {
		info, err := os.Stat(arg)
		if err != nil {
			return nil, 0, err
		}
		if !info.IsDir() {
			add(arg, info.Size())
			continue
		}
		err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != arg && slices.Contains(skipDirs, d.Name()) {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			add(p, info.Size())
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
	}
	return paths, skipped, nil
}
