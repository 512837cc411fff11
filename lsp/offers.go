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
	done chan offerAnswer
	// expect is what each of its code actions, as last offered, makes
	// of the document ("all", "hunk N"): what the editor must show once
	// it applied the action's edit. Guarded by offers.mu.
	expect map[string]landing
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

// offerAnswer is the user's choice on an offer: the outcome for the
// model, and why it was not applied whole, in a few words, for the user.
type offerAnswer struct {
	out tools.Outcome
	why string
}

// setExpected records what an offered action makes of the document.
func (ofs *offers) setExpected(o *offered, key string, l landing) {
	ofs.mu.Lock()
	defer ofs.mu.Unlock()
	if o.expect == nil {
		o.expect = map[string]landing{}
	}
	o.expect[key] = l
}

// expected is what the offer's action key, as last offered, makes of the
// document.
func (ofs *offers) expected(id, key string) (landing, bool) {
	ofs.mu.Lock()
	defer ofs.mu.Unlock()
	o := ofs.pending[id]
	if o == nil {
		return landing{}, false
	}
	l, ok := o.expect[key]
	return l, ok
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
