package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika/agent/engine"
)

// A server's tools/list_changed does not change the tools in force: the
// definitions are in the prefix the engine caches, and a change there
// makes it prefill the whole request again. The server's new list is
// fetched at once and kept (relist); the model hears of the change with
// that server's next result (Run); and the session takes the new list
// (TakeChange) at its next fold, which rewrites the request anyway.

// relist lists the tools of a server that announced a change, for the
// next TakeChange; a list that fails leaves the tools in force.
func (b *Toolbox) relist(s *server) {
	cs, err := s.live()
	if err != nil || cs == nil {
		return
	}
	list, err := s.list(context.Background(), cs)
	if err != nil {
		return
	}
	b.mu.Lock()
	s.pending, s.listed = list, true
	b.mu.Unlock()
}

// Pending reports whether a server's new list of tools waits for
// TakeChange.
func (b *Toolbox) Pending() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.servers {
		if s.listed {
			return true
		}
	}
	return false
}

// TakeChange puts in force the lists of tools the servers announced
// since the start or the last TakeChange, and returns the definitions
// now (as Definitions) and a line for the user naming the tools added
// and removed; ok is false, and nothing changes, when no new list waits
// or the new lists define the same tools, byte for byte.
func (b *Toolbox) TakeChange() (defs []engine.Tool, said string, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var names []string
	for _, s := range b.servers {
		if s.listed {
			s.tools, s.pending, s.listed = s.pending, nil, false
			s.changed.Store(false)
			s.told.Store(false)
			names = append(names, s.spec.Name)
		}
	}
	if len(names) == 0 {
		return nil, "", false
	}
	old := b.cur.Load().defs
	list, _, _ := b.build()
	if engine.SameTools(old, list.defs) {
		return nil, "", false
	}
	b.cur.Store(list)
	said = fmt.Sprintf("the tools of the MCP server %s changed (%s); the requests carry the new list from this fold on",
		strings.Join(names, ", "), engine.ToolChanges(old, list.defs))
	return b.Definitions(), said, true
}
