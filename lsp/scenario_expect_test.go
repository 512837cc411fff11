package lsp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
)

// expectations are what expect checks, by its first word.
var expectations = map[string]verb{
	"cancelled":       {arity: 1, run: (*runner).expectCancelled},
	"line":            {arity: 2, run: (*runner).expectLine},
	"no-line":         {arity: 2, run: (*runner).expectLine},
	"result":          {arity: 2, run: (*runner).expectResult},
	"status":          {arity: 2, run: (*runner).expectStatus},
	"encoding":        {arity: 2, run: (*runner).expectEncoding},
	"less":            {arity: 3, run: (*runner).expectLess},
	"request":         {arity: 3, run: (*runner).expectRequest},
	"file":            {arity: 3, run: (*runner).expectFile},
	"transcript-file": {arity: 2, run: (*runner).expectTranscriptFile},
}

// expect checks one property now (waiting, bounded, where it says so);
// args are the step's words after expect.
func (r *runner) expect(line string, args []string) {
	t := r.t
	t.Helper()
	x, ok := expectations[args[0]]
	if !ok {
		t.Fatalf("step %q: unknown expectation", line)
	}
	if len(args) < x.arity {
		t.Fatalf("step %q: want more arguments", line)
	}
	x.run(r, line, args)
}

func (r *runner) expectCancelled(line string, _ []string) {
	t, e := r.t, r.e
	t.Helper()
	if r.cancelAt.IsZero() {
		t.Fatalf("step %q: no cancel step before it", line)
	}
	rec, at := e.Engine.WaitRecord("a chat request closed by a cancel", func(rec sim.RequestRecord) bool {
		return rec.Cancelled && !r.claimed[rec.Seq]
	})
	r.claimed[rec.Seq] = true
	d := at.Sub(r.cancelAt)
	r.figure(fmt.Sprintf("cancel → engine stream #%d closed in %v", rec.Seq, d.Round(10*time.Microsecond)))
	t.Logf("cancel → engine stream #%d closed in %v (sent %d of %d tokens)", rec.Seq, d, rec.SentTokens, rec.CompletionTokens)
	const bound = 2 * time.Second
	if d > bound {
		t.Errorf("the engine's stream closed %v after the cancel, want under %v", d, bound)
	}
	if rec.SentTokens >= rec.CompletionTokens {
		t.Errorf("request #%d sent all %d tokens: it was not cancelled mid-stream", rec.Seq, rec.CompletionTokens)
	}
	r.results = append(r.results, fmt.Sprintf("%s → engine request #%d closed mid-stream", line, rec.Seq))
}

// expectLine is expect line and expect no-line.
func (r *runner) expectLine(line string, args []string) {
	t, e := r.t, r.e
	t.Helper()
	rx := regexp.MustCompile(regexArg(t, args[1]))
	found := false
	for _, l := range e.Transcript() {
		if rx.MatchString(r.normalize(l)) && !strings.HasPrefix(l, "> ") {
			found = true
		}
	}
	if found != (args[0] == "line") {
		t.Errorf("step %q failed; received:\n%s", line, e.Dump())
	}
}

func (r *runner) expectResult(line string, args []string) {
	t := r.t
	t.Helper()
	if !regexp.MustCompile(regexArg(t, args[1])).MatchString(r.lastRes) {
		t.Errorf("step %q: the last result is %s", line, r.lastRes)
	}
}

func (r *runner) expectStatus(line string, args []string) {
	t := r.t
	t.Helper()
	var last string
	for _, ev := range r.e.Events() {
		if ev.Method == "reika/status" {
			last = string(ev.Params)
		}
	}
	if !regexp.MustCompile(regexArg(t, args[1])).MatchString(r.normalize(last)) {
		t.Errorf("step %q: the last reika/status is %s", line, last)
	}
}

func (r *runner) expectEncoding(line string, args []string) {
	r.t.Helper()
	if r.e.Encoding != args[1] {
		r.t.Errorf("step %q: the server chose %s", line, r.e.Encoding)
	}
	r.results = append(r.results, line+" → "+r.e.Encoding)
}

func (r *runner) expectLess(line string, args []string) {
	r.t.Helper()
	var v map[string]any
	json.Unmarshal(r.lastRaw, &v)
	a, okA := v[args[1]].(float64)
	b, okB := v[args[2]].(float64)
	if !okA || !okB || a >= b {
		r.t.Errorf("step %q: the last result is %s", line, r.lastRaw)
	}
}

func (r *runner) expectRequest(line string, args []string) {
	t := r.t
	t.Helper()
	reqs := renderRequests(r.e.Engine.Requests())
	n := len(reqs)
	if args[1] != "last" {
		var err error
		if n, err = strconv.Atoi(args[1]); err != nil {
			t.Fatalf("step %q: %v", line, err)
		}
	}
	if n < 1 || n > len(reqs) {
		t.Fatalf("step %q: the engine has %d requests", line, len(reqs))
	}
	text := r.normalize(strings.Join(reqs[n-1].messages, "\n"))
	if !regexp.MustCompile(regexArg(t, args[2])).MatchString(text) {
		t.Errorf("step %q: request %d carried:\n%s", line, n, text)
	}
}

func (r *runner) expectFile(line string, args []string) {
	t := r.t
	t.Helper()
	text, ok := r.e.Current(r.path(args[1]))
	if !ok || !regexp.MustCompile(regexArg(t, args[2])).MatchString(text) {
		t.Errorf("step %q: %s is:\n%s", line, args[1], text)
	}
}

func (r *runner) expectTranscriptFile(line string, args []string) {
	t := r.t
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(r.e.StateDir, "*.jsonl"))
	var all strings.Builder
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		all.Write(data)
	}
	if !regexp.MustCompile(regexArg(t, args[1])).MatchString(all.String()) {
		t.Errorf("step %q: the transcripts %v hold:\n%.2000s", line, paths, all.String())
	}
}
