package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/reika-lsp/reika/agent/replay"
	"github.com/reika-lsp/reika/contextwin"
)

// builder records one session.
type builder struct {
	src   *Source
	spec  recipe
	rng   *rand.Rand
	files map[string]string // the working copy: edits apply to it
	read  []string          // files read so far, first read first

	rounds  []replay.Round
	facts   []replay.Fact
	pending []factPlace // facts waiting for their place
	// calls of the round being built
	cur replay.Round
	// the test functions of each package (testsByPackage)
	testDirs []string
	tests    map[string][]string
}

// build records the session of recipe spec, round by round, from src.
func build(src *Source, spec recipe) *replay.Recording {
	b := &builder{src: src, spec: spec, rng: rand.New(rand.NewPCG(spec.seed, 0x7265696b61)), files: map[string]string{}}
	for k, v := range src.files {
		b.files[k] = v
	}
	b.pending = slices.Clone(spec.places)
	task := spec.task + "\n"
	for _, f := range spec.taskFacts {
		task += "\nFACT " + f.Key + ": " + f.Value
		b.facts = append(b.facts, replay.Fact{Key: f.Key, Value: f.Value, Round: 1})
	}
	for n := 1; n <= spec.rounds; n++ {
		b.cur = replay.Round{}
		switch {
		case n == 1:
			b.cur.User = task
		case spec.users[n] != "":
			b.cur.User = spec.users[n]
		}
		if b.cur.User != "" && n > 1 {
			for _, f := range b.due(n, "user") {
				b.cur.User += "\nFACT " + f.Key + ": " + f.Value
			}
		}
		if n == spec.rounds {
			b.final()
		} else {
			b.step(n)
		}
		b.rounds = append(b.rounds, b.cur)
	}
	system := systemPrompt
	if spec.system != "" {
		system = spec.system
	}
	return &replay.Recording{
		Name: spec.name, Source: src.rev, System: system, RepoMap: repoMap(src), Tools: toolDefs,
		Facts: b.facts, Rounds: b.rounds,
	}
}

// due takes the pending facts of kind where whose round has come.
func (b *builder) due(n int, where string) []replay.Fact {
	var out []replay.Fact
	b.pending = slices.DeleteFunc(b.pending, func(p factPlace) bool {
		if p.where != where || p.round > n {
			return false
		}
		out = append(out, p.fact)
		b.facts = append(b.facts, replay.Fact{Key: p.fact.Key, Value: p.fact.Value, Round: n})
		return true
	})
	return out
}

// hasDue reports whether a pending fact of kind where has come by round n.
func (b *builder) hasDue(n int, where string) bool {
	for _, p := range b.pending {
		if p.where == where && p.round <= n {
			return true
		}
	}
	return false
}

// say sets the assistant's text of the round.
func (b *builder) say(format string, args ...any) {
	b.cur.Assistant = contextwin.Message{Role: contextwin.Assistant, Content: fmt.Sprintf(format, args...)}
}

// call adds a tool call and its result to the round.
func (b *builder) call(n int, name string, args any, result string, p contextwin.Payload) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(args) // maps of strings and numbers always encode
	id := fmt.Sprintf("call_r%03d_%d", n, len(b.cur.Assistant.ToolCalls))
	b.cur.Assistant.ToolCalls = append(b.cur.Assistant.ToolCalls, contextwin.ToolCall{ID: id, Name: name, Arguments: strings.TrimSuffix(buf.String(), "\n")})
	b.cur.Results = append(b.cur.Results, contextwin.Message{Role: contextwin.Tool, ToolCallID: id, Content: result, Payload: p})
}

// pick draws one of items.
func (b *builder) pick(items []string) string { return items[b.rng.IntN(len(items))] }

// final makes the last round: the answer, with no calls.
func (b *builder) final() {
	b.cur.Assistant = contextwin.Message{Role: contextwin.Assistant, Content: fmt.Sprintf(
		"Done. I changed %s; the regression test covers turns of 60 rounds and more, and go vet and go test -race ./... pass. "+
			"Nothing is left open on my side.", strings.Join(b.spec.edits, ", "))}
}

// numbered prints lines as cat -n does, the first numbered from.
func numbered(lines []string, from int) string {
	var sb strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&sb, "%6d\t%s\n", from+i, l)
	}
	return sb.String()
}

// fileLines splits a file's text into its lines, without the last newline.
func fileLines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
