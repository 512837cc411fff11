package synth

import (
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strings"

	"github.com/reika-lsp/reika/agent/replay"
	"github.com/reika-lsp/reika/contextwin"
)

// Delegation: a pair of sessions that measures what a subagent saves. A
// task asks three questions about three packages of src; answering each
// takes reading 5–8 of its files. In delegate-SEED the session hands each
// exploration to a subagent (Round.Sub), which reads the files and
// reports; in inline-SEED the session reads them itself. Between the
// explorations it reads and edits a little of its own, the same in both,
// and its last answer restates every fact. A fact sits in one file of
// each exploration (a comment line "FACT key: value"), which the report
// restates as "key: value", and two in the task.

// DelegationExplorations is how many explorations a pair makes.
const DelegationExplorations = 3

// Delegation returns the pair of seed: the delegated session and the
// inline one.
func Delegation(src *Source, seed uint64) (delegated, inline *replay.Recording, err error) {
	rng := rand.New(rand.NewPCG(seed, 0x64656c6567617465))
	var dirs []string
	for _, d := range src.dirs {
		if len(ownGoFiles(src, d)) >= 5 {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) < DelegationExplorations {
		return nil, nil, fmt.Errorf("delegation: %d packages of five files or more, want %d", len(dirs), DelegationExplorations)
	}
	rng.Shuffle(len(dirs), func(i, j int) { dirs[i], dirs[j] = dirs[j], dirs[i] })
	dirs = dirs[:DelegationExplorations]
	g := &delegationGen{src: src, rng: rng, seed: seed}
	for k, d := range dirs {
		g.explore(k, d)
	}
	return g.recording(true), g.recording(false), nil
}

// delegationGen draws the pair's content once; recording lays it out
// either way.
type delegationGen struct {
	src  *Source
	rng  *rand.Rand
	seed uint64
	exps []exploration
}

// exploration is one question: the package, the reads that answer it, the
// fact planted in one of them, and the report.
type exploration struct {
	dir    string
	reads  []contextwin.Message // results, their calls' ids left to the layout
	fact   replay.Fact
	report string
	own    string // the file the session reads of its own after it
}

func (g *delegationGen) explore(k int, dir string) {
	files := ownGoFiles(g.src, dir)
	g.rng.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
	files = files[:min(len(files), 5+g.rng.IntN(4))]
	e := exploration{dir: dir, fact: replay.Fact{Key: fmt.Sprintf("%s_owner", path.Base(dir)), Value: fmt.Sprintf("team-%s-%03d", path.Base(dir), g.rng.IntN(1000))}}
	at := 1 + g.rng.IntN(len(files)-1)
	var entry string
	for i, f := range files {
		lines := fileLines(g.src.files[f])
		if i == at {
			lines = append(lines, "// FACT "+e.fact.Key+": "+e.fact.Value)
		}
		if entry == "" {
			for n, l := range lines {
				if strings.HasPrefix(l, "func ") {
					entry = fmt.Sprintf("%s:%d", f, n+1)
					break
				}
			}
		}
		e.reads = append(e.reads, contextwin.Message{Role: contextwin.Tool, Content: numbered(lines, 1),
			Payload: contextwin.Payload{Kind: contextwin.Read, Path: f, From: 1, To: len(lines), Total: len(lines)}})
	}
	var names []string
	for _, f := range files {
		names = append(names, path.Base(f))
	}
	e.report = fmt.Sprintf("Report on %s: it holds %d files that matter (%s).\n- entry point: %s\n- %s: %s",
		dir, len(files), strings.Join(names, ", "), entry, e.fact.Key, e.fact.Value)
	others := g.src.goFiles("", false)
	e.own = others[g.rng.IntN(len(others))]
	g.exps = append(g.exps, e)
}

// ownGoFiles are the Go files of package dir, its tests aside.
func ownGoFiles(src *Source, dir string) []string {
	return slices.DeleteFunc(slices.Clone(src.goFiles(dir, false)), func(p string) bool { return path.Dir(p) != dir })
}

// task is the pair's first message.
func (g *delegationGen) task() (string, []replay.Fact) {
	var dirs []string
	for _, e := range g.exps {
		dirs = append(dirs, e.dir)
	}
	facts := []replay.Fact{{Key: "deadline", Value: fmt.Sprintf("review due %d Dec", 1+g.seed%28)}, {Key: "reviewer", Value: fmt.Sprintf("@rev-%d", g.seed%97)}}
	text := fmt.Sprintf("Before we refactor, answer three questions: what do %s do, where is each one's entry point, and who owns each? "+
		"Each owner is in a FACT comment somewhere in its package.", strings.Join(dirs, ", "))
	for _, f := range facts {
		text += "\n\nFACT " + f.Key + ": " + f.Value
	}
	return text, facts
}

// recording lays the pair's content out with subagents, or inline.
func (g *delegationGen) recording(delegate bool) *replay.Recording {
	text, facts := g.task()
	for i := range facts {
		facts[i].Round = 1
	}
	l := &layout{}
	for k, e := range g.exps {
		if delegate {
			l.delegate(k, e, &facts)
		} else {
			l.inline(k, e, &facts)
		}
		l.readOwn(g.src, e.own)
	}
	var answer strings.Builder
	answer.WriteString("The three answers:")
	for _, e := range g.exps {
		answer.WriteString("\n\n" + e.report)
	}
	l.rounds = append(l.rounds, replay.Round{Assistant: contextwin.Message{Role: contextwin.Assistant, Content: answer.String()}})
	l.rounds[0].User = text
	name := ShapeName("inline", g.seed)
	if delegate {
		name = ShapeName("delegate", g.seed)
	}
	return &replay.Recording{Name: name, Source: g.src.rev, System: systemPrompt, RepoMap: repoMap(g.src), Tools: toolDefs, Facts: facts, Rounds: l.rounds}
}

// layout builds the rounds of one recording.
type layout struct {
	rounds []replay.Round
}

// call makes a round of one call and its result, in rounds: the round
// numbered n (from 1) of its list.
func callRound(n int, text, name, args string, res contextwin.Message) replay.Round {
	id := fmt.Sprintf("call_r%03d_0", n)
	res.ToolCallID = id
	return replay.Round{Assistant: contextwin.Message{Role: contextwin.Assistant, Content: text,
		ToolCalls: []contextwin.ToolCall{{ID: id, Name: name, Arguments: args}}}, Results: []contextwin.Message{res}}
}

func readArgs(p string) string { return `{"path":"` + p + `"}` }

func (l *layout) delegate(k int, e exploration, facts *[]replay.Fact) {
	var sub []replay.Round
	for i, r := range e.reads {
		sub = append(sub, callRound(i+1, "Reading "+r.Payload.Path+".", "read", readArgs(r.Payload.Path), r))
	}
	sub = append(sub, replay.Round{Assistant: contextwin.Message{Role: contextwin.Assistant, Content: e.report}})
	args := fmt.Sprintf(`{"task":"Find out what %s does, its entry point, and its owner (a FACT comment in one of its files).","report":"the package's files that matter, its entry point as file:line, and owner as key: value"}`, e.dir)
	n := len(l.rounds) + 1
	r := callRound(n, fmt.Sprintf("Question %d goes to a subagent: %s.", k+1, e.dir), "subagent", args,
		contextwin.Message{Role: contextwin.Tool, Content: e.report, Payload: contextwin.Payload{Kind: contextwin.Report}})
	r.Sub = sub
	l.rounds = append(l.rounds, r)
	*facts = append(*facts, replay.Fact{Key: e.fact.Key, Value: e.fact.Value, Round: n})
}

func (l *layout) inline(k int, e exploration, facts *[]replay.Fact) {
	for i, r := range e.reads {
		n := len(l.rounds) + 1
		text := "Reading " + r.Payload.Path + "."
		if i == 0 {
			text = fmt.Sprintf("Question %d, %s: reading it myself. %s", k+1, e.dir, text)
		}
		l.rounds = append(l.rounds, callRound(n, text, "read", readArgs(r.Payload.Path), r))
		if strings.Contains(r.Content, "FACT "+e.fact.Key) {
			*facts = append(*facts, replay.Fact{Key: e.fact.Key, Value: e.fact.Value, Round: n})
		}
	}
}

// readOwn is the session's own read between two explorations: the first
// 60 lines of a file.
func (l *layout) readOwn(src *Source, p string) {
	lines := fileLines(src.files[p])
	lines = lines[:min(len(lines), 60)]
	n := len(l.rounds) + 1
	res := contextwin.Message{Role: contextwin.Tool, Content: numbered(lines, 1),
		Payload: contextwin.Payload{Kind: contextwin.Read, Path: p, From: 1, To: len(lines), Total: len(fileLines(src.files[p]))}}
	l.rounds = append(l.rounds, callRound(n, "A look at "+p+" on my own.", "read", `{"path":"`+p+`","limit":60}`, res))
}
