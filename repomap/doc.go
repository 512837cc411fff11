// Package repomap builds the repo map: a ranked outline of the files open
// in the editor (and those the agent has read), small enough to sit in
// every request's fixed prefix and stable to the byte, so that the
// engine's prefix cache keeps it.
//
// The caller owns the I/O. It hands the map each file's content as it
// opens or changes, names the files the user is working in, and asks for
// the text at a character budget (contextwin.RepoMapChars):
//
//	m := repomap.New()
//	defer m.Close()
//	m.Update("agent/run.go", content) // on open and on every change
//	m.SetFocus("agent/run.go")        // the files the user works in
//	text := m.Render(6400)            // at most 6400 bytes
//
// Three steps make the map.
//
// Extraction (Update). Go, Python, JavaScript, TypeScript, TSX, Rust,
// Java, C, C++, C#, Ruby, PHP and shell scripts are parsed with
// tree-sitter; the definitions at the top level and in classes, impls,
// traits, modules and namespaces become Symbols, each with its line
// and a one-line signature, and a scan of the text outside comments and
// strings gives the identifiers the file uses. Other files are listed by
// name. A file's previous syntax tree is edited and reparsed, and only
// the top-level declarations the edit reached (or whose structure the
// reparse changed) are extracted again, so a keystroke in a file of a few
// thousand lines costs under a millisecond. The map keeps the trees of the
// 8 files changed last, as they live in C memory at some 30 times a file's
// size, and with each its content, which the next incremental parse diffs
// against; another file keeps only its symbols and references, and is
// parsed whole on its next change. A file that is binary, minified, over
// MaxParseBytes, or whose parse overruns its time limit is listed by name
// with a note; one with syntax errors keeps the definitions around them.
//
// Ranking (Render). Files are the nodes of a graph with an edge from each
// file to the files that define the names it uses; PageRank over it, with
// the focus files weighted up, scores every file, and each file's score
// is shared among its symbols by how much the others use them.
//
// Rendering (Render). Files and symbols are taken best first, each
// bringing its file's line and the definitions it is nested in, as many as
// the budget holds (found by binary search); they are written grouped by
// file in path order, symbols in line order, and a last line counts what
// was left out. Ties are broken by path and line, and no step depends on
// map iteration order, the clock or the platform's floating point, so
// the same files, contents and focus give the same bytes.
//
// Byte offsets and 1-based lines are the only positions; sizes are in
// bytes of UTF-8 ("chars"). The package does no I/O, starts no goroutines
// and reads no clock (tree-sitter's parse time limit aside, which only a
// pathological file reaches). A Map is safe for concurrent use; Close
// frees its C memory. The C allocator (glibc's) gives every thread that
// parses an arena of its own, and trees freed across threads leave them
// all fragmented: a caller with many files does best to call Update from
// one OS thread (runtime.LockOSThread), as the language server does.
package repomap
