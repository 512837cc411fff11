package contextwin

import "strings"

// Breakdown is the window at a glance, in tokens: what the last request
// carried by part, and the room around it. The parts add up to Size; Size,
// Reserve and Free add up to Window when the window is known and the
// request fit.
type Breakdown struct {
	Prefix  int `json:"prefix"`   // the system prompt, the tools and the bootstrap, the repo map aside
	RepoMap int `json:"repo_map"` // the repo map the bootstrap carries
	Recap   int `json:"recap"`    // the recap of folded turns (front and middle)
	History int `json:"history"`  // the user's and the model's messages
	Tools   int `json:"tools"`    // tool results
	Size    int `json:"size"`     // the request: the sum of the parts
	Reserve int `json:"reserve"`  // room held back for the reply
	Free    int `json:"free"`     // the rest of the window
	Window  int `json:"window"`   // 0: unknown
}

// Parts are the bytes of a request by part, as Breakdown divides it.
type Parts struct {
	Prefix, RepoMap, Recap, History, Tools int
}

// Divide shares a request of size tokens among its parts in proportion to
// their bytes (the largest remainders rounded up, so that the parts add up
// to size exactly), under budget b.
func Divide(size int, p Parts, b Budget) Breakdown {
	bytes := []int{p.Prefix, p.RepoMap, p.Recap, p.History, p.Tools}
	total := 0
	for _, n := range bytes {
		total += max(n, 0)
	}
	tokens := make([]int, len(bytes))
	if total > 0 && size > 0 {
		given := 0
		rest := make([]int, len(bytes))
		for i, n := range bytes {
			share := max(n, 0) * size
			tokens[i], rest[i] = share/total, share%total
			given += tokens[i]
		}
		for ; given < size; given++ {
			best := 0
			for i := range rest {
				if rest[i] > rest[best] {
					best = i
				}
			}
			tokens[best]++
			rest[best] = -1
		}
	} else if size > 0 {
		tokens[0] = size
	}
	d := Breakdown{Prefix: tokens[0], RepoMap: tokens[1], Recap: tokens[2], History: tokens[3], Tools: tokens[4],
		Size: size, Window: b.Window}
	if b.Window > 0 {
		d.Reserve = b.Reserve
		d.Free = max(b.Window-size-b.Reserve, 0)
	}
	return d
}

// Breakdown divides the last request's size (the chip's) among its parts:
// the fixed prefix, repoMapChars of it being the repo map, and the view's
// messages.
func (s *Planner) Breakdown(repoMapChars int) Breakdown {
	p := Parts{RepoMap: repoMapChars, Prefix: max(s.cfg.PrefixChars-repoMapChars, 0)}
	for _, it := range s.view.items {
		n, m := it.size, it.msg
		switch {
		case it.of < 0: // a recap
			p.Recap += n
		case m.Role == Tool:
			p.Tools += n
		default:
			p.History += n
		}
	}
	return Divide(s.Chip().Size, p, s.Budget())
}

// String writes the breakdown on one line: "prefix 2.1k · map 900 ·
// recap 0 · history 1.2k · tools 3k · reserve 2k · free 6.8k".
func (d Breakdown) String() string {
	parts := []string{
		"prefix " + kTokens(d.Prefix), "map " + kTokens(d.RepoMap), "recap " + kTokens(d.Recap),
		"history " + kTokens(d.History), "tools " + kTokens(d.Tools),
	}
	if d.Window > 0 {
		parts = append(parts, "reserve "+kTokens(d.Reserve), "free "+kTokens(d.Free))
	}
	return strings.Join(parts, " · ")
}
