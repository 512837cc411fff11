package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/contextwin"
)

// checkReport is what `reika-lsp check --json` prints. Each *_source
// field is a stable identifier of where the value came from (a settings
// layer such as "env" or "config-file", or discovery's "probe",
// "engine-only-model", "vllm-max-model-len", …: engine.Source.ID), and the
// *_source_text field beside it says the same in words, as the text
// report prints it.
type checkReport struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"` // the one line that says what to fix

	Config             string   `json:"config"`
	Profile            string   `json:"profile"`
	Endpoint           string   `json:"endpoint"`
	EndpointSource     string   `json:"endpoint_source"`
	EndpointSourceText string   `json:"endpoint_source_text"`
	Flavor             string   `json:"flavor"`
	Version            string   `json:"version,omitempty"`
	Model              string   `json:"model"`
	ModelSource        string   `json:"model_source"`
	ModelSourceText    string   `json:"model_source_text"`
	Models             []string `json:"models,omitempty"`

	Window           int    `json:"window"`
	WindowSource     string `json:"window_source"`
	WindowSourceText string `json:"window_source_text"`
	EngineWindow     int    `json:"engine_window,omitempty"`
	TrainedWindow    int    `json:"trained_window,omitempty"`
	Slots            int    `json:"slots,omitempty"`
	// Router is set behind llama.cpp's router mode, ModelStatus the
	// model's status there (loaded, sleeping, unloaded, loading) and
	// RouterNote what it means for the cache.
	Router      bool   `json:"router,omitempty"`
	ModelStatus string `json:"model_status,omitempty"`
	RouterNote  string `json:"router_note,omitempty"`
	// Slot is the llama.cpp slot a session pins, -1 for none; Cache says
	// what keeps the engine's prompt cache and how to keep it longer.
	Slot  *int   `json:"slot,omitempty"`
	Cache string `json:"cache,omitempty"`
	// SlotSharing says how sessions share the engine's slots: each its
	// own while there are enough, then the least recently used.
	SlotSharing string `json:"slot_sharing,omitempty"`
	// Subagents says where a subagent's requests go and what that costs
	// the session's cache, and how to make it cost nothing.
	Subagents string `json:"subagents,omitempty"`
	// CacheClass is how the engine reuses its prompt cache
	// (contextwin.CacheClass), CacheModel the same in words with its
	// window or block, CacheAdvice what it costs and what to do.
	CacheClass      string `json:"cache_class"`
	CacheModel      string `json:"cache_model"`
	CacheSource     string `json:"cache_source"`
	CacheSourceText string `json:"cache_source_text"`
	CacheAdvice     string `json:"cache_advice"`
	SWAWindow       int    `json:"swa_window,omitempty"`
	CacheBlock      int    `json:"cache_block,omitempty"`
	SWAFullMiB      int    `json:"swa_full_mib,omitempty"`
	Architecture    string `json:"architecture,omitempty"`
	// Sandbox says how the agent's commands run: contained, or why not.
	Sandbox string `json:"sandbox"`
	// MCP are the MCP servers of the config file: their tools, or why
	// they did not start.
	MCP []agent.MCPServer `json:"mcp_servers,omitempty"`
	// LanguageServers are the workspace's language servers the agent
	// asks, with their languages, or why there are none.
	LanguageServers string `json:"language_servers,omitempty"`
	OutputLimit     int    `json:"output_limit,omitempty"`
	Reserve         int    `json:"reserve"`
	ReserveSource   string `json:"reserve_source"`

	Budget         *contextwin.Budget `json:"budget,omitempty"`
	ToolCalls      *toolCheck         `json:"tool_calls,omitempty"`
	TruncationRisk string             `json:"truncation_risk,omitempty"`
	Warnings       []string           `json:"warnings"`
	// Overrides say which editor settings (--settings) replace a value
	// of the config file or the environment.
	Overrides []string     `json:"overrides"`
	Settings  []settingRow `json:"settings"`
	// Ignored are the trust-widening values of the settings push
	// (--pushed) that are not taken, with the notice the editor shows.
	Ignored []ignoredRow `json:"ignored"`
}

type ignoredRow struct {
	Name   string `json:"name"`
	Value  any    `json:"value"`
	Notice string `json:"notice"`
}

type toolCheck struct {
	OK     bool    `json:"ok"`
	Detail string  `json:"detail"`
	Prompt int     `json:"prompt_tokens,omitempty"`
	Took   float64 `json:"seconds,omitempty"`
}

type settingRow struct {
	Name   string `json:"name"`
	Value  any    `json:"value"`
	Source string `json:"source"`
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return checkMain(ctx, args, os.Getenv, stdout, stderr)
}

func checkMain(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print a JSON report")
	noTools := fs.Bool("no-tools", false, "skip the tool-call request (which costs one short generation)")
	useSim := fs.Bool("sim", false, "check against the built-in simulated engine, started on a free loopback port")
	timeout := fs.Duration("timeout", 2*time.Minute, "bound on the tool-call request")
	editor := fs.String("settings", "", "the editor's startup options (initializationOptions) as JSON (`{\"reika\": {…}}` or the settings), as the editor sends them")
	pushed := fs.String("pushed", "", "a settings push of the editor (workspace/didChangeConfiguration) as JSON; the settings that widen trust are not taken from it")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reika-lsp check [--json] [--no-tools] [--sim] [--settings JSON] [--pushed JSON]")
		fmt.Fprintln(stderr, "\nPrints the effective settings and where each came from, the engine, the model,")
		fmt.Fprintln(stderr, "the context window and its source, the reserve and the budget, and whether tool")
		fmt.Fprintln(stderr, "calls work. Exits 1 with one line saying what to fix when something fails.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "reika-lsp check: unexpected argument %q\n", fs.Arg(0))
		return 2
	}

	var endpoint *config.Value[string]
	if *useSim {
		_, base, stop, err := startSim(ctx, sim.Config{Ctx: 16384})
		if err != nil {
			fmt.Fprintf(stderr, "reika-lsp check: %v\n", err)
			return 1
		}
		defer stop()
		endpoint = &config.Value[string]{Value: base, Source: config.Source{Layer: config.Flag, Detail: "--sim: the built-in simulated engine"}}
	}

	var settings, push json.RawMessage
	for _, f := range []struct {
		flag, text string
		to         *json.RawMessage
	}{{"--settings", *editor, &settings}, {"--pushed", *pushed, &push}} {
		if f.text == "" {
			continue
		}
		if !json.Valid([]byte(f.text)) || !strings.HasPrefix(strings.TrimSpace(f.text), "{") {
			fmt.Fprintf(stderr, "reika-lsp check: %s wants a JSON object, such as {\"reika\": {\"model\": \"qwen\"}}\n", f.flag)
			return 2
		}
		*f.to = json.RawMessage(f.text)
	}
	rep := doCheck(ctx, getenv, agent.Setup{Settings: settings, Pushed: push}, endpoint, !*noTools, *timeout)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		printCheck(stdout, rep)
	}
	if !rep.OK {
		fmt.Fprintf(stderr, "reika-lsp check: %s\n", rep.Error)
		return 1
	}
	return 0
}

// startSim runs a simulated engine in-process on a free loopback port
// until stop is called; base is its /v1 URL.
func startSim(ctx context.Context, cfg sim.Config) (srv *sim.Server, base string, stop func(), err error) {
	srv, err = sim.New(cfg)
	if err != nil {
		return nil, "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, fmt.Errorf("start the simulated engine: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ctx, ln)
	}()
	return srv, "http://" + ln.Addr().String() + "/v1", func() { cancel(); <-done }, nil
}

// doCheck gathers the report; it never fails halfway without saying why in
// rep.Error. editor holds the editor's settings (Settings, Pushed);
// endpoint, when set, overrides the configured one. The session it
// inspects is built by agent.Start, as the server builds its own.
func doCheck(ctx context.Context, getenv func(string) string, editor agent.Setup, endpoint *config.Value[string], tryTools bool, timeout time.Duration) *checkReport {
	rep := &checkReport{Warnings: []string{}, Overrides: []string{}, Ignored: []ignoredRow{}}
	wd, _ := os.Getwd()
	setup := agent.Setup{Settings: editor.Settings, Pushed: editor.Pushed, Getenv: getenv, Folders: []string{wd}, StateDir: agent.NoTranscript}
	if endpoint != nil {
		setup.Override = func(s *config.Settings) { s.Endpoint = *endpoint }
	}
	s, path, err := setup.Resolve()
	rep.Config = path
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	if _, err := os.Stat(path); err != nil {
		rep.Config += " (none)"
	}
	rep.Profile = s.Profile.Value
	rep.Warnings = append(rep.Warnings, s.Warnings...)
	rep.Overrides = append(rep.Overrides, s.Overrides...)
	for _, ig := range s.Ignored {
		rep.Ignored = append(rep.Ignored, ignoredRow{ig.Name, ig.Value, ig.Notice()})
	}
	s.Each(func(name string, v any, src config.Source) {
		rep.Settings = append(rep.Settings, settingRow{name, v, src.String()})
	})

	rep.Reserve, rep.ReserveSource = contextwin.DefaultReserve, "default; grows to fit the replies, up to a quarter of the window"
	if s.MinGenTokens.IsSet() {
		rep.Reserve, rep.ReserveSource = s.MinGenTokens.Value, s.MinGenTokens.Source.String()+"; pinned"
	}

	sess, err := agent.Start(ctx, setup)
	if err != nil {
		rep.Endpoint = s.Endpoint.Value
		rep.EndpointSource, rep.EndpointSourceText = s.Endpoint.Source.ID(), s.Endpoint.Source.String()
		rep.Error = err.Error()
		return rep
	}
	defer sess.Close()
	conn := sess.Info().Connection
	d := conn.Discovery
	rep.takeConnection(conn, s.Model)
	rep.Slots, rep.OutputLimit = d.Slots, d.OutputLimit
	rep.Cache = cacheAdvice(d.Flavor, sess.Slot())
	rep.Subagents = subagentAdvice(d.Flavor, d.Slots, sess.Slot())
	rep.Sandbox = sess.Info().Sandbox.Line
	rep.MCP = sess.Info().MCP
	rep.LanguageServers = sess.Info().LanguageServers
	if sl := sess.Slot(); sl.ID >= 0 {
		rep.Slot = &sl.ID
		rep.SlotSharing = slotSharing(d.Slots, sl)
	}
	rep.TruncationRisk = d.TruncationRisk
	rep.Warnings = append(rep.Warnings, d.Warnings...)
	if w := sess.RoomWarning(); w != "" {
		rep.Warnings = append(rep.Warnings, w)
	}

	if d.Window > 0 {
		b := sess.Budget()
		if b.Reserve != rep.Reserve {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("the reserve %d leaves no room in a %d-token window; using %d", rep.Reserve, d.Window, b.Reserve))
			rep.Reserve = b.Reserve
		}
		rep.Budget = &b
	}

	if tryTools {
		rep.ToolCalls = checkTools(ctx, conn, timeout)
		if !rep.ToolCalls.OK {
			rep.Error = rep.ToolCalls.Detail
			return rep
		}
	}
	rep.OK = true
	return rep
}

// takeConnection takes in what the connection found: the endpoint, the
// engine, the model (model, when set, is the setting that named it) and
// the window, each with its source.
func (rep *checkReport) takeConnection(conn *engine.Connection, model config.Value[string]) {
	d := conn.Discovery
	rep.Endpoint = conn.Options.BaseURL
	rep.EndpointSource, rep.EndpointSourceText = conn.EndpointSource.ID, conn.EndpointSource.Text
	rep.Flavor, rep.Version = string(d.Flavor), d.Version
	rep.Model, rep.Models = conn.Options.Model, d.Models
	rep.ModelSource, rep.ModelSourceText = d.ModelSource.ID, d.ModelSource.Text
	if model.IsSet() {
		rep.ModelSource, rep.ModelSourceText = model.Source.ID(), model.Source.String()
	}
	rep.Window = d.Window
	rep.WindowSource, rep.WindowSourceText = d.WindowSource.ID, d.WindowSource.Text
	rep.EngineWindow, rep.TrainedWindow = d.EngineWindow, d.TrainedWindow
	if d.Router {
		rep.Router, rep.ModelStatus = true, d.ModelStatus
		rep.RouterNote = engine.RouterNote(rep.Model, d.ModelStatus)
	}
	rep.CacheClass, rep.CacheModel = string(d.Cache.Class), d.Cache.String()
	rep.CacheSource, rep.CacheSourceText = d.CacheSource.ID, d.CacheSource.Text
	rep.CacheAdvice, rep.Architecture = d.CacheAdvice(), d.Architecture
	rep.SWAWindow, rep.SWAFullMiB = d.Cache.SWA, d.SWAFullMiB
	if d.Cache.Class == contextwin.CacheBlocks || d.Cache.Class == contextwin.CacheBoundary {
		rep.CacheBlock = d.Cache.Block
	}
}

// The tool the doctor asks the model to call.
var pingTool = engine.Tool{
	Name:        "ping",
	Description: "Answer a ping. Call it with the text you were given.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the text to echo"}},"required":["text"]}`),
}

// checkTools sends one short request that asks for a tool call.
func checkTools(ctx context.Context, conn *engine.Connection, timeout time.Duration) *toolCheck {
	opts := conn.Options
	opts.Timeouts.Response = timeout
	zero := 0.0
	req := engine.Request{
		Messages: []engine.Message{
			{Role: "system", Content: "You are a connectivity check. Use the tools you are given."},
			{Role: "user", Content: `Call the ping tool with the text "reika".`},
		},
		Tools:       []engine.Tool{pingTool},
		ToolChoice:  "auto",
		MaxTokens:   512,
		Temperature: &zero,
	}
	start := time.Now()
	resp, err := engine.NewClient(opts).Chat(ctx, req, nil)
	took := time.Since(start).Seconds()
	if err != nil {
		if errors.Is(err, engine.BadToolCall) {
			return &toolCheck{Detail: "tool calls are malformed: the model called a tool with arguments that are not JSON; " + toolHint(conn.Discovery.Flavor), Took: took}
		}
		return &toolCheck{Detail: "the tool-call request failed: " + err.Error(), Took: took}
	}
	for _, tc := range resp.ToolCalls {
		if tc.Name == pingTool.Name {
			return &toolCheck{OK: true, Detail: "the model called ping" + argsNote(tc.Arguments), Prompt: resp.Usage.PromptTokens, Took: took}
		}
	}
	if f := agent.TextCallFormat(resp.Content, pingTool.Name); f != "" {
		return &toolCheck{
			Detail: fmt.Sprintf("the engine's tool-call parser is off: the model wrote its call as text (%s). Reika reads such calls and runs them, "+
				"but the engine's parser is more reliable: %s", f, toolHint(conn.Discovery.Flavor)),
			Prompt: resp.Usage.PromptTokens, Took: took,
		}
	}
	what := "answered with text"
	if len(resp.ToolCalls) > 0 {
		what = "called " + resp.ToolCalls[0].Name + " instead"
	}
	return &toolCheck{
		Detail: fmt.Sprintf("tool calls do not work: asked to call ping, the model %s (finish_reason %s); %s",
			what, resp.FinishReason, toolHint(conn.Discovery.Flavor)),
		Prompt: resp.Usage.PromptTokens, Took: took,
	}
}

func argsNote(args string) string {
	if strings.Contains(args, "reika") {
		return ` with "reika"`
	}
	return ""
}

func toolHint(f engine.Flavor) string {
	switch f {
	case engine.LlamaCpp:
		return "start llama-server with --jinja and a model whose chat template supports tools"
	case engine.VLLM:
		return "start vLLM with --enable-auto-tool-choice and the --tool-call-parser for the model"
	case engine.SGLang:
		return "start SGLang with the --tool-call-parser for the model"
	case engine.Ollama:
		return "use a model with tool support (ollama show MODEL lists tools among its capabilities)"
	case engine.LMStudio:
		return "load a model trained for tool use"
	}
	return "use a model and server that support OpenAI tool calls"
}

// printCheck prints the report for people: the facts with their sources,
// the budget, the settings, then what the user should know.
func printCheck(w io.Writer, r *checkReport) {
	printFacts(w, r)
	if b := r.Budget; b != nil {
		fmt.Fprintln(w, "\nbudget (tokens; the map in characters)")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "window\treserve\tusable\tshed point\tshed target\tfold keeps\trecap\tmap chars\t")
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", b.Window, b.Reserve, b.Usable, b.ShedPoint, b.ShedTarget, b.FoldKeeps, b.Recap, b.RepoMapChars)
		tw.Flush()
	}
	fmt.Fprintln(w, "\nsettings")
	var rows []factRow
	for _, s := range r.Settings {
		rows = append(rows, factRow{s.Name, valueText(s.Value), s.Source})
	}
	printRows(w, "  ", rows)
	printNotes(w, r)
}

// printFacts prints the first table: the config, the endpoint and the
// engine, the model, the window and the reserve, each with its source.
func printFacts(w io.Writer, r *checkReport) {
	var rows []factRow
	row := func(k, v, src string) { rows = append(rows, factRow{k, v, src}) }
	row("config", r.Config, "")
	if r.Profile != "" {
		row("profile", r.Profile, "")
	}
	row("endpoint", orDash(r.Endpoint), r.EndpointSourceText)
	if r.Flavor != "" {
		eng := engine.Flavor(r.Flavor).Name()
		if r.Version != "" {
			eng += " " + r.Version
		}
		if r.Router {
			eng += ", router mode"
		}
		if r.Slots > 0 {
			eng += fmt.Sprintf(", %d slot%s", r.Slots, pluralSuffix(r.Slots))
		}
		row("engine", eng, "")
		if r.Router {
			row("model status", r.ModelStatus, r.RouterNote)
		}
		if r.Slot != nil {
			row("slot", fmt.Sprintf("%d", *r.Slot), r.SlotSharing)
		}
		if r.Cache != "" {
			row("cache", r.Cache, "")
		}
		if r.Subagents != "" {
			row("subagents", r.Subagents, "")
		}
		if r.CacheClass != "" {
			row("cache class", r.CacheModel, r.CacheSourceText)
			row("cache cost", r.CacheAdvice, "")
		}
		if r.Sandbox != "" {
			row("sandbox", r.Sandbox, "")
		}
		if r.LanguageServers != "" {
			row("lang servers", r.LanguageServers, "started when asked")
		}
		for _, m := range r.MCP {
			if m.Error != "" {
				row("mcp "+m.Name, "not started: "+m.Error, "")
			} else {
				row("mcp "+m.Name, fmt.Sprintf("%d tools", m.Tools), "mcp__"+m.Name+"__…, each call asked")
			}
		}
		row("model", orDash(r.Model), r.ModelSourceText)
		if r.Window > 0 {
			row("window", fmt.Sprintf("%d tokens", r.Window), r.WindowSourceText)
		} else {
			row("window", "unknown", "set REIKA_CONTEXT_WINDOW")
		}
		if r.EngineWindow > 0 && r.EngineWindow != r.Window {
			row("engine window", fmt.Sprintf("%d tokens", r.EngineWindow), "")
		}
		if r.TrainedWindow > 0 {
			row("trained length", fmt.Sprintf("%d tokens", r.TrainedWindow), "not the usable window")
		}
		if r.OutputLimit > 0 {
			row("output limit", fmt.Sprintf("%d tokens", r.OutputLimit), "models.dev catalog")
		}
		row("reserve", fmt.Sprintf("%d tokens", r.Reserve), r.ReserveSource)
	}
	if r.ToolCalls != nil {
		status := "ok: " + r.ToolCalls.Detail
		if !r.ToolCalls.OK {
			status = "FAILED"
		}
		row("tool calls", status, fmt.Sprintf("%.1fs", r.ToolCalls.Took))
	}
	printRows(w, "", rows)
}

// printNotes prints what the user should know: the ignored pushes, the
// editor's overrides, the truncation risk, the warnings, and "ok".
func printNotes(w io.Writer, r *checkReport) {
	if len(r.Ignored) > 0 {
		fmt.Fprintln(w, "\nignored: the settings push widens trust")
		for _, ig := range r.Ignored {
			b, _ := json.Marshal(ig.Value)
			printItem(w, fmt.Sprintf("%s %s: %s", ig.Name, b, ig.Notice))
		}
	}
	if len(r.Overrides) > 0 {
		fmt.Fprintln(w, "\nthe editor overrides")
		for _, o := range r.Overrides {
			printItem(w, o)
		}
	}
	if r.TruncationRisk != "" {
		fmt.Fprintln(w)
		for _, l := range wrapWords("truncation risk: "+r.TruncationRisk, checkWidth) {
			fmt.Fprintln(w, l)
		}
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(w, "\nwarnings")
		for _, s := range r.Warnings {
			printItem(w, s)
		}
	}
	if r.OK {
		fmt.Fprintln(w, "\nok")
	}
}

func valueText(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return "-"
		}
		return x
	case map[string]any:
		if len(x) == 0 {
			return "-"
		}
		b, _ := json.Marshal(x)
		return string(b)
	}
	return fmt.Sprint(v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// pluralSuffix is the "s" a count of n takes in English: none for one.
func pluralSuffix(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// slotSharing says how this session came by its llama.cpp slot and how
// sessions share the engine's slots.
func slotSharing(slots int, sl agent.SlotInfo) string {
	if !sl.Pinned {
		return "the engine's only slot: every session and subagent shares it; start llama-server with --parallel N to give each its own"
	}
	return fmt.Sprintf("%s; each session and subagent pins one of the %d slots (id_slot), and sessions beyond %d share the least recently used: "+
		"a session whose slot another took over is told before its next run", sl.Why, slots, slots)
}

// cacheAdvice says what keeps the engine's prompt cache between requests
// and across restarts, and how to keep it longer.
// subagentAdvice says where a subagent's requests go on this engine and
// what they cost the session's cache.
func subagentAdvice(f engine.Flavor, slots int, sl agent.SlotInfo) string {
	switch {
	case f == engine.LlamaCpp && sl.Pinned:
		return fmt.Sprintf("a slot of their own (%d slots): this session's cache is untouched", slots)
	case f == engine.LlamaCpp:
		return "this session's slot: llama-server keeps the prompt they displace in host memory (--cache-ram, on by default in recent builds) " +
			"and Reika learns whether it did; start it with --parallel 2 to give them a slot of their own"
	case f == engine.VLLM, f == engine.SGLang:
		return "sequences of their own: the prefix cache keeps this session's blocks while memory allows"
	case f == engine.Ollama:
		return "the model's parallel sequences (OLLAMA_NUM_PARALLEL): with one, they displace this session's cache"
	}
	return ""
}

func cacheAdvice(f engine.Flavor, sl agent.SlotInfo) string {
	switch f {
	case engine.LlamaCpp:
		if sl.EngineSaves {
			return "saved across restarts (--slot-save-path is on): reika.resume restores a session's slot"
		}
		return "lost when llama-server restarts: " + agent.SlotSaveHint
	case engine.VLLM, engine.SGLang:
		return "automatic prefix caching, shared by every request: nothing to pin"
	case engine.Ollama:
		return "kept while the model stays loaded: set keep_alive (OLLAMA_KEEP_ALIVE) long, and load one model at a time (OLLAMA_MAX_LOADED_MODELS=1)"
	}
	return ""
}
