package repomap

import (
	"fmt"
	"testing"
)

// A name many files define (New, main, a vendored copy) links a file's
// use of it only to the definers in the file's own directory: one with
// few definers links to all of them. So the graph grows with the files,
// not with their square.
func TestCommonNamesLinkNearby(t *testing.T) {
	m := New()
	defer m.Close()
	for i := range maxDefiners + 8 {
		m.Update(fmt.Sprintf("p%d/new.py", i), []byte("def make_thing():\n    return 1\n"))
	}
	for i := range 3 {
		m.Update(fmt.Sprintf("q%d/rare.py", i), []byte("def rare_helper():\n    return 2\n"))
	}
	m.Update("p3/use.py", []byte("make_thing()\nrare_helper()\n"))
	files := m.sorted()
	defs := definitions(files)
	edges, _ := referenceEdges(files, defs, usersOf(files, defs), newVisibility(files))
	to := map[string][]string{}
	for _, e := range edges {
		if files[e.from].path == "p3/use.py" {
			to[e.name] = append(to[e.name], files[e.to].path)
		}
	}
	if got := to["make_thing"]; len(got) != 1 || got[0] != "p3/new.py" {
		t.Errorf("a use of a name %d files define links to %q; want only p3/new.py, its directory's", maxDefiners+8, got)
	}
	if got := to["rare_helper"]; len(got) != 3 {
		t.Errorf("a use of a name 3 files define links to %q; want all three", got)
	}
}

// The trees the map keeps are found oldest first without a scan of every
// file, and the queue that finds them stays small however often one file
// is parsed again.
func TestTreeQueueStaysSmall(t *testing.T) {
	m := New()
	defer m.Close()
	for i := range 50 {
		m.Update(fmt.Sprintf("f%d.go", i), []byte("package f\n\nfunc F() {}\n"))
	}
	for i := range 500 {
		m.Update("f0.go", []byte(fmt.Sprintf("package f\n\nfunc F() { _ = %d }\n", i)))
	}
	if m.trees > keepTrees || len(m.treed) > 4*keepTrees+1 {
		t.Errorf("%d trees kept, %d queued; want at most %d and %d", m.trees, len(m.treed), keepTrees, 4*keepTrees+1)
	}
	if f := m.files["f0.go"]; f.tree == nil {
		t.Errorf("the file being edited lost its tree: its next change is parsed whole")
	}
}
