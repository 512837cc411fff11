package lsp

import (
	"slices"
	"strings"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

// offers are the proposals waiting in code actions, for a client that
// cannot take workspace/applyEdit, by id. It is safe for concurrent use.
type offers struct {
	mu      sync.Mutex
	pending map[string]*offered
}

// offered is a proposal waiting in code actions: the user applies it (or
// one hunk) or rejects it there.
type offered struct {
	id   string
	uri  protocol.DocumentURI
	plan EditPlan
	done chan tools.Outcome
}

func (ofs *offers) add(o *offered) {
	ofs.mu.Lock()
	defer ofs.mu.Unlock()
	if ofs.pending == nil {
		ofs.pending = map[string]*offered{}
	}
	ofs.pending[o.id] = o
}

func (ofs *offers) remove(id string) {
	ofs.mu.Lock()
	defer ofs.mu.Unlock()
	delete(ofs.pending, id)
}

// get is the offer with this id, nil when it is no longer waiting.
func (ofs *offers) get(id string) *offered {
	ofs.mu.Lock()
	defer ofs.mu.Unlock()
	return ofs.pending[id]
}

// forURI are the offers on a document, by id.
func (ofs *offers) forURI(uri protocol.DocumentURI) []*offered {
	ofs.mu.Lock()
	var out []*offered
	for _, o := range ofs.pending {
		if o.uri == uri {
			out = append(out, o)
		}
	}
	ofs.mu.Unlock()
	slices.SortFunc(out, func(a, b *offered) int { return strings.Compare(a.id, b.id) })
	return out
}
