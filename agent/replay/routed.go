package replay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
)

// Sessions through a router. A team runs several replicas of one engine
// behind a router (sim.Replicas); each replica keeps its own prompt
// cache, and a session finds its prefix only on the replica that holds
// it. Routed replays several recorded sessions at once, Reika's own
// strategy, through a simulated router of a policy, with the session's
// id in its requests or without it, and measures each session's cache
// reuse; Routing compares every policy with the single engine each
// session would have alone.

// RoutedOptions say what Routed replays.
type RoutedOptions struct {
	// Recordings are replayed at once, each a session of its own.
	Recordings []*Recording
	Window     int
	// Replicas and Route are the router's.
	Replicas int
	Route    sim.Route
	// NoSession sends no session id: the headers a router reads are left
	// out (engine.Identity with none).
	NoSession bool
	// Engine is each replica's engine, one slot each unless it says more.
	Engine Engine
}

// Reuse is one session's cache figures over every request it sent.
type Reuse struct {
	Session string `json:"session"`
	// Prompt is Σ prompt tokens, Cached Σ of them the engine took from
	// its cache (cache_n), Prefilled Σ prompt_n.
	Prompt    int `json:"prompt"`
	Cached    int `json:"cached"`
	Prefilled int `json:"prefilled"`
	Requests  int `json:"requests"`
	// Stalled is the round where the session stopped early, 0 when it
	// went to the end: a stalled session's figures are no result.
	Stalled int `json:"stalled,omitempty"`
}

// Share is Cached ÷ Prompt.
func (r Reuse) Share() float64 {
	if r.Prompt == 0 {
		return 0
	}
	return float64(r.Cached) / float64(r.Prompt)
}

// ReuseOf is a replay's reuse.
func ReuseOf(r Result) Reuse { return reuseOf(r.Row.Session, r.Requests, r.Row.Stalled) }

// reuseOf sums a replay's requests.
func reuseOf(name string, reqs []Request, stalled int) Reuse {
	r := Reuse{Session: name, Stalled: stalled}
	for _, q := range reqs {
		if q.Refused {
			continue
		}
		r.Prompt += q.PromptTokens
		r.Cached += q.CacheN
		r.Prefilled += q.PromptN
		r.Requests++
	}
	return r
}

// Routed replays opt.Recordings at once through a router of opt.Route in
// front of opt.Replicas simulated engines, and returns each session's
// reuse, in the recordings' order.
func Routed(ctx context.Context, opt RoutedOptions) ([]Reuse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	router, err := sim.NewReplicas(opt.Engine.config(opt.Window), opt.Replicas, opt.Route)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("replay: listen on loopback: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- router.Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()
	base := "http://" + ln.Addr().String() + "/v1"
	var id engine.Identity
	if opt.NoSession {
		id = engine.Identity{Headers: []string{}, ParentHeaders: []string{}}
	}
	told := Engine{Flavor: opt.Engine.Flavor, Cache: router.Servers()[0].Config().Cache, Reasoning: opt.Engine.Reasoning}.told()
	out := make([]Reuse, len(opt.Recordings))
	errs := make([]error, len(opt.Recordings))
	var wg sync.WaitGroup
	for i, rec := range opt.Recordings {
		rec = opt.Engine.recording(rec)
		key := fmt.Sprintf("%d-%s", i, rec.Name)
		wg.Go(func() {
			hc := &http.Client{Transport: scriptKey{key: key, next: http.DefaultTransport}}
			m := &meter{client: engine.NewClient(engine.Options{BaseURL: base, Flavor: opt.Engine.clientFlavor(), Identity: id, HTTPClient: hc}),
				srv: routedScript{r: router, key: key}, loss: newLosses(rec)}
			stalled, err := replayOurs(ctx, rec, base, m, told)
			out[i], errs[i] = reuseOf(rec.Name, m.requests, stalled), err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("replay through %d replicas, %s: %w", opt.Replicas, opt.Route, err)
	}
	return out, nil
}

// routedScript is one session's script on a router's replicas.
type routedScript struct {
	r   *sim.Replicas
	key string
}

func (s routedScript) AppendScript(turns ...sim.Turn) { s.r.AppendScriptFor(s.key, turns...) }

// LastRequest is not known: the replicas answer several sessions at once.
func (s routedScript) LastRequest() (sim.RequestRecord, bool) { return sim.RequestRecord{}, false }
func (s routedScript) Config() sim.Config                     { return s.r.Servers()[0].Config() }

// scriptKey names a session's script in every request it sends.
type scriptKey struct {
	key  string
	next http.RoundTripper
}

func (t scriptKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(sim.ScriptHeader, t.key)
	return t.next.RoundTrip(r)
}

// RoutingRow is one policy's figures: every session's reuse through it.
type RoutingRow struct {
	Route     string  `json:"route"` // "single engine" for the baseline
	SessionID bool    `json:"session_id"`
	Sessions  []Reuse `json:"sessions"`
}

// Routing replays recs alone on a single engine each (the baseline), then
// at once through a router of every policy in front of replicas engines,
// with the session's id and without it.
func Routing(ctx context.Context, recs []*Recording, window, replicas int, e Engine) ([]RoutingRow, error) {
	res, err := Results(ctx, Options{Recordings: recs, Windows: []int{window}, Strategies: []string{"ours"}, Engine: e, Parallel: 1})
	if err != nil {
		return nil, err
	}
	base := RoutingRow{Route: "single engine", SessionID: true}
	for _, r := range res {
		base.Sessions = append(base.Sessions, reuseOf(r.Row.Session, r.Requests, r.Row.Stalled))
	}
	rows := []RoutingRow{base}
	for _, route := range []sim.Route{sim.RoundRobin, sim.PrefixHash, sim.SessionRoute} {
		for _, noID := range []bool{false, true} {
			got, err := Routed(ctx, RoutedOptions{Recordings: recs, Window: window, Replicas: replicas, Route: route, NoSession: noID, Engine: e})
			if err != nil {
				return nil, err
			}
			rows = append(rows, RoutingRow{Route: string(route), SessionID: !noID, Sessions: got})
		}
	}
	return rows, nil
}

// KVBudget replays recs at once on one vLLM engine whose KV cache holds
// each of budgets tokens in turn (sim.CacheModel.KVTokens), and returns
// one row per budget ("kv 131072"): how many concurrent sessions a KV
// cache of that size keeps warm.
func KVBudget(ctx context.Context, recs []*Recording, window int, e Engine, budgets []int) ([]RoutingRow, error) {
	var rows []RoutingRow
	for _, b := range budgets {
		e := e
		e.Flavor, e.Cache.KVTokens = sim.VLLM, b
		got, err := Routed(ctx, RoutedOptions{Recordings: recs, Window: window, Replicas: 1, Route: sim.SessionRoute, Engine: e})
		if err != nil {
			return nil, err
		}
		rows = append(rows, RoutingRow{Route: fmt.Sprintf("kv %d", b), SessionID: true, Sessions: got})
	}
	return rows, nil
}
