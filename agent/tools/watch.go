package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of the scan for protected names a command created or changed.
const (
	// watchEntries is how many directory entries one scan reads at most.
	watchEntries = 200_000
	// watchTime is how long one scan may take.
	watchTime = time.Second
	// watchKeep is the largest file whose bytes a scan keeps, so that a
	// change to it can be undone.
	watchKeep = 64 << 10
)

// A stamp is what a scan knows of one protected entry: enough to tell that
// it changed (a command that rewrites a file and sets its mtime back
// still changes its ctime), and its bytes (a link's target) when small.
type stamp struct {
	mode  fs.FileMode
	size  int64
	mtime time.Time
	id    fileID // inode, device and ctime where the system has them
	data  []byte // nil when not kept
}

func (a stamp) same(b stamp) bool {
	if a.mode.IsDir() && b.mode.IsDir() {
		return a.mode == b.mode // its times move with what is created in it, told on its own
	}
	return a.mode == b.mode && a.size == b.size && a.mtime.Equal(b.mtime) && a.id == b.id &&
		(a.data == nil || b.data == nil || bytes.Equal(a.data, b.data))
}

// A scan is the protected entries below the workspace folders at one
// moment, at any depth, but for the folders' protected top-level entries,
// which a contained command cannot change (the sandbox keeps them
// read-only and lets it create nothing at the top level).
type scan struct {
	entries map[string]stamp    // by absolute path
	dirs    map[string]struct{} // the directories read whole
	seen    map[string]struct{} // the directories met, read or not
	unread  []string            // the directories it was refused (their mode)
	read    int                 // entries read
	cut     string              // why the scan stopped before the end, or ""
}

// scanProtected walks the folders breadth first, without following links,
// and keeps the protected entries it meets, within watchEntries and
// watchTime (the scan says so when cut). Inside a .git directory what git
// rewrites on its own (objects, refs, logs, the index, locks) is skipped:
// a change there runs nothing.
func scanProtected(roots []string) *scan {
	start := time.Now()
	sc := &scan{entries: map[string]stamp{}, dirs: map[string]struct{}{}, seen: map[string]struct{}{}}
	var queue []scanDir
	for _, r := range roots {
		queue = append(queue, scanDir{abs: r})
		sc.seen[r] = struct{}{}
	}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if sc.read >= watchEntries || time.Since(start) > watchTime {
			sc.cut = fmt.Sprintf("it stopped after %d entries in %s", sc.read, time.Since(start).Round(time.Millisecond))
			break
		}
		list, err := dirReader(d.abs)
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				sc.unread = append(sc.unread, d.abs)
			}
			continue
		}
		sc.dirs[d.abs] = struct{}{}
		sc.read += len(list)
		for _, e := range list {
			c := d.child(e.Name())
			if d.rel == "" && ProtectedTopLevel(e.Name()) || c.git && gitNoise(c.rel) {
				continue
			}
			if c.protected {
				sc.entries[c.abs] = stampOf(c.abs, e)
			}
			if e.IsDir() {
				queue = append(queue, c)
				sc.seen[c.abs] = struct{}{}
			}
		}
	}
	return sc
}

// A scanDir is a directory the scan will read, with what its entries
// inherit: that it is protected (so is everything below it), that it is
// in a .git directory.
type scanDir struct {
	abs, rel  string
	base      string // the name, lowercased
	protected bool
	git       bool
}

// child is the entry name of d. Protection judges it only when it could
// be protected (in a protected directory, a name that starts with a dot
// or is a protected file's, below .github): most names are not.
func (d scanDir) child(name string) scanDir {
	low := strings.ToLower(name)
	c := scanDir{abs: filepath.Join(d.abs, name), rel: path.Join(d.rel, name), base: low, git: d.git || low == ".git"}
	_, file := protectedFiles[low]
	c.protected = d.protected || (strings.HasPrefix(low, ".") || file || d.base == ".github") && Protection(c.rel) != ""
	return c
}

// dirReader lists a directory for the scan (a test's stands for a user
// whom a mode refuses, where the tests run as root).
var dirReader = readDir

// readDir lists a directory's entries, unsorted.
func readDir(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// gitNoise reports whether rel lies in a .git directory where git writes
// on its own and nothing runs from: its objects, refs and logs, the
// index, locks and the *_HEAD files.
func gitNoise(rel string) bool {
	parts := strings.Split(strings.ToLower(rel), "/")
	i := slices.Index(parts, ".git")
	if i < 0 || i == len(parts)-1 {
		return false
	}
	for _, p := range parts[i+1:] {
		switch p {
		case "objects", "refs", "logs", "lfs":
			return true
		}
	}
	base := parts[len(parts)-1]
	return base == "index" || base == "packed-refs" || base == "commit_editmsg" || base == "description" ||
		strings.HasSuffix(base, ".lock") || strings.HasSuffix(base, "_head") || base == "head"
}

// stampOf stamps the entry at abs, with its bytes when it is a small file
// or a link.
func stampOf(abs string, e fs.DirEntry) stamp {
	fi, err := os.Lstat(abs)
	if err != nil {
		return stamp{mode: e.Type()}
	}
	st := stamp{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime(), id: idOf(fi)}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if to, err := os.Readlink(abs); err == nil {
			st.data = []byte(to)
		}
	case fi.Mode().IsRegular() && fi.Size() <= watchKeep:
		if b, err := os.ReadFile(abs); err == nil && len(b) <= watchKeep {
			st.data = b
		}
	}
	return st
}

// covers reports whether the scan would have met abs had it been there:
// the nearest of its directories that the scan met was read whole (a
// directory it did not meet was not there).
func (sc *scan) covers(abs string) bool {
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if _, met := sc.seen[d]; met {
			_, read := sc.dirs[d]
			return read
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// A change is a protected entry a command created, changed or removed.
type change struct {
	abs  string
	was  *stamp // nil when created
	now  *stamp // nil when removed
	what string // "created", "changed", "removed"
}

// changes compares two scans: what after has that before did not (where
// before looked), what differs, and what before had that after lacks
// (where after looked). An entry created inside
// a created directory is told with the directory.
func changes(before, after *scan) []change {
	var out []change
	for abs, now := range after.entries {
		was, ok := before.entries[abs]
		switch {
		case !ok:
			if before.covers(abs) {
				out = append(out, change{abs: abs, now: &now, what: "created"})
			}
		case !was.same(now):
			out = append(out, change{abs: abs, was: &was, now: &now, what: "changed"})
		}
	}
	for abs, was := range before.entries {
		if _, ok := after.entries[abs]; !ok {
			if after.covers(abs) {
				out = append(out, change{abs: abs, was: &was, what: "removed"})
			}
		}
	}
	slices.SortFunc(out, func(a, b change) int { return strings.Compare(a.abs, b.abs) })
	var kept []change
	for _, c := range out {
		if n := len(kept); n > 0 && kept[n-1].what == "created" && c.what == "created" && within(kept[n-1].abs, c.abs) {
			continue
		}
		kept = append(kept, c)
	}
	return kept
}

// lookAfter scans the folders after a command. A directory the command
// made unreadable (chmod 000, to hide what it put inside from this look)
// is made readable to its owner again and looked into, at most eight
// levels deep; opened names those directories.
func (s *Set) lookAfter(before *scan) (after *scan, opened []string) {
	for range 8 {
		after = scanProtected(s.roots())
		var hidden []string
		for _, d := range after.unread {
			if !slices.Contains(before.unread, d) && !slices.Contains(opened, d) {
				hidden = append(hidden, d)
			}
		}
		if len(hidden) == 0 {
			return after, opened
		}
		for _, d := range hidden {
			if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
				os.Chmod(d, fi.Mode().Perm()|0o700)
			}
			opened = append(opened, d)
		}
	}
	return scanProtected(s.roots()), opened
}

// watchAsks is how many changes after one command are asked about one by
// one; more (an npm install that brings packages with their own
// .travis.yml) are asked about together, in one question.
const watchAsks = 4

// watchTold is how many of them the model is told of one by one.
const watchTold = 12

// review puts each protected entry a contained command created, changed
// or removed to the user, as a change to a protected path is put, and
// keeps it only on a yes; otherwise (a no, a client that cannot ask) it
// removes what was created and puts back what was changed or removed from
// the bytes the scan kept (a larger file that changed is removed). It
// returns what the model is told, or "".
func (s *Set) review(ctx context.Context, command string, before *scan) string {
	after, opened := s.lookAfter(before)
	var lines []string
	for _, d := range opened {
		lines = append(lines, fmt.Sprintf("[the command made %s unreadable; it was made readable again to look inside]", s.folderRel(d, d)))
	}
	if after.cut != "" || before.cut != "" {
		lines = append(lines, "[the look for protected files the command created was cut short ("+join(before.cut, after.cut)+"): deeper ones were not checked]")
	}
	cs := changes(before, after)
	if len(cs) > watchAsks {
		var list []string
		for _, c := range cs {
			rel := s.folderRel(c.abs, c.abs)
			list = append(list, fmt.Sprintf("%s %s: %s", c.what, rel, Protection(rel)))
		}
		q := Question{Kind: AskLeft, Subject: fmt.Sprintf("%d protected files", len(cs)), Label: "protected", Answers: []Answer{Once},
			Why:    fmt.Sprintf("the command %q created, changed or removed them, and they run or steer tools later; they are kept only on your yes", command),
			Detail: strings.Join(list, "\n")}
		answer := s.ask(ctx, q)
		for i, c := range cs {
			told := s.settle(c, answer)
			if i < watchTold {
				lines = append(lines, told)
			}
		}
		if len(cs) > watchTold {
			lines = append(lines, fmt.Sprintf("[… and %d more, settled the same way]", len(cs)-watchTold))
		}
		return strings.Join(lines, "\n")
	}
	for _, c := range cs {
		rel := s.folderRel(c.abs, c.abs)
		q := Question{Kind: AskLeft, Subject: rel, Label: "protected", Answers: []Answer{Once},
			Why:    fmt.Sprintf("the command %q %s it, and %s; it is kept only on your yes", command, c.what, Protection(rel)),
			Detail: c.detail(rel)}
		lines = append(lines, s.settle(c, s.ask(ctx, q)))
	}
	return strings.Join(lines, "\n")
}

// settle keeps a change on a yes and undoes it otherwise, and says so for
// the model.
func (s *Set) settle(c change, answer Answer) string {
	rel := s.folderRel(c.abs, c.abs)
	if answer == Once {
		return fmt.Sprintf("[the command %s %s, which is protected; the user kept it]", c.what, rel)
	}
	who := "the user said no"
	if answer == Unasked {
		who = "the user could not be asked"
	}
	return fmt.Sprintf("[the command %s %s, which is protected (%s); %s: %s. Do not do it again: a change there needs the edit or write tool and the user's yes]",
		c.what, rel, Protection(rel), who, c.undo())
}

// detail is the change as a question shows it: a diff of a small text
// file, else what it is.
func (c change) detail(rel string) string {
	text := func(st *stamp) (string, bool) {
		if st == nil {
			return "", true
		}
		if st.data == nil || !st.mode.IsRegular() || !utf8.Valid(st.data) {
			return "", false
		}
		return string(st.data), true
	}
	a, okA := text(c.was)
	b, okB := text(c.now)
	if okA && okB && (c.was == nil || c.was.mode.IsRegular()) && (c.now == nil || c.now.mode.IsRegular()) {
		la, lb := splitKeep(a), splitKeep(b)
		return unifiedDiff(rel, la, lb, diffLines(la, lb), 3)
	}
	describe := func(st *stamp) string {
		switch {
		case st == nil:
			return "nothing"
		case st.mode.IsDir():
			return "a directory"
		case st.mode&fs.ModeSymlink != 0:
			return fmt.Sprintf("a symbolic link to %q", st.data)
		}
		return fmt.Sprintf("a file of %d bytes, mode %s", st.size, st.mode)
	}
	return fmt.Sprintf("was: %s\nnow: %s", describe(c.was), describe(c.now))
}

// undo takes the change back, and says what it did.
func (c change) undo() string {
	if c.was == nil {
		if err := os.RemoveAll(c.abs); err != nil {
			return fmt.Sprintf("removing it failed (%v)", err)
		}
		return "it was removed"
	}
	restorable := c.was.mode.IsDir() || c.was.data != nil && (c.was.mode.IsRegular() || c.was.mode&fs.ModeSymlink != 0)
	if err := os.RemoveAll(c.abs); err != nil {
		return fmt.Sprintf("undoing it failed (%v)", err)
	}
	if !restorable {
		return "it was removed (too large to keep its old bytes)"
	}
	if err := os.MkdirAll(filepath.Dir(c.abs), 0o755); err != nil {
		return fmt.Sprintf("putting it back failed (%v)", err)
	}
	var err error
	switch {
	case c.was.mode.IsDir():
		err = os.Mkdir(c.abs, c.was.mode.Perm())
	case c.was.mode&fs.ModeSymlink != 0:
		err = os.Symlink(string(c.was.data), c.abs)
	default:
		err = os.WriteFile(c.abs, c.was.data, c.was.mode.Perm())
	}
	if err != nil {
		return fmt.Sprintf("putting it back failed (%v)", err)
	}
	return "it was put back as it was"
}

// roots are the workspace folders' roots.
func (s *Set) roots() []string {
	roots := make([]string, len(s.folders))
	for i, f := range s.folders {
		roots[i] = f.root
	}
	return roots
}
