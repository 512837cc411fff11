// Package tools owns the tools the agent's model calls: read, glob, grep,
// edit, write, bash and (when enabled) fetch_url, over the folders of one
// workspace; and, when Config has a Navigator, the navigation tools
// (definition, references, symbols, hover, diagnostics: navtools.go),
// whose answers are capped and say when they are approximate.
//
//	set, err := tools.New(tools.Config{Folders: []string{root}, Buffers: docs, Proposer: propose})
//	req.Tools = set.Definitions() // fixed order, fixed bytes: part of the cached prompt prefix
//	res := set.Run(ctx, call)     // never panics: a failure is a Result with Error set
//
// Every path is confined to the folders (and, for read and grep, the spill
// dir): `..`, absolute paths elsewhere and symbolic links that lead out
// are refused. Open editor buffers win over the disk. The tools never
// write a file: edit and write build a Proposal (against the buffer, with
// its version) and hand it to the Proposer; bash runs a command line
// without asking only when the allowlist covers every command in it, each
// parsed with a real shell parser and checked by its program's rule
// (bashallow.go, bashrules.go), and otherwise asks the user, saying why.
// Around a contained command it looks for the protected names (Protection)
// the command created, changed or removed at any depth, and asks about
// them, keeping them only on a yes (watch.go). A front end that sends an
// edit long after its proposal judges it again with Rejudge or Recheck. glob and grep honour .gitignore files with their
// own matcher. Long bash, grep, glob and fetch_url results are also saved
// in the spill dir for the model to page through with read.
//
// A Set is safe for concurrent use.
package tools
