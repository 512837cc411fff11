package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/reika-lsp/reika/agent/sim"
)

const simUsage = `usage: reika-lsp sim [flags]

Run the simulated engine: an OpenAI-compatible server that behaves like
llama.cpp's llama-server (or vLLM, or Ollama) without a model. Replies come
from --script, then from a built-in policy that explores --root with the
tools the agent offers.

Flags:
  --listen ADDR           address to listen on (default 127.0.0.1:8080; vllm 8000, ollama 11434)
  --ctx N                 context window in tokens, per slot (default 8192)
  --flavor NAME           llamacpp, vllm or ollama (default llamacpp)
  --engine NAME           the model behind the cache: dense, swa (sliding window) or
                          recurrent on llamacpp, or vllm, or vllm-hybrid (a hybrid model whose
                          recurrent state vLLM keeps only at each prompt's last block boundary);
                          default dense
  --swa-window N          the sliding window of --engine swa, in tokens (default 1024)
  --ctx-checkpoints N     context checkpoints a slot keeps, swa and recurrent (default 32)
  --ubatch-size N         micro-batch in tokens, which places the checkpoints (default 512)
  --checkpoint-min-step N a full slot drops first the checkpoints closer than this (default 8192)
  --block-size N          vllm's cache block in tokens (default 16; 1024 for vllm-hybrid)
  --model NAME            model id to report
  --slots N               parallel slots, each with its own prompt cache (default 1)
  --slot-save-path DIR    allow POST /slots/ID?action=save|restore|erase, files in DIR (llamacpp)
  --router                llama.cpp's router mode: /v1/models with each model's status, /props?model=ID
  --replicas N            N engines behind a router, each with its own prompt cache (default 1)
  --route POLICY          the router's: round-robin (default), prefix-hash (the first messages'
                          hash) or session (x-session-id, a subagent beside its parent)
  --script FILE           scripted replies: a JSON array or JSONL of turns
  --root DIR              directory the policy explores (default "."; "" for none)
  --rounds N              tool rounds before the policy's final answer (default 40)
  --reasoning-template T  what the chat template renders of the reasoning sent back:
                          drop (none, the default), turn (the current turn's) or all
  --load-time D           answer 503 "Loading model" for this long (llamacpp)
  --realtime              take the modelled prefill and decode time
  --prefill-ms F          modelled milliseconds per prompt token (default 0.5)
  --decode-ms F           modelled milliseconds per generated token (default 20)
  --quiet                 no per-request log on stderr
  --bodies FILE           append each chat request's body to FILE, a line of JSON each

Faults (latency applies to every chat request; the others follow
--fail-every and --fail-first, by default every request):
  --latency D             delay before the first byte
  --chunk-latency D       delay before every streamed chunk
  --fail-status N         answer with HTTP status N (500, 502, 503, 429…)
  --html-error            answer with a reverse proxy's HTML error page (502 unless --fail-status)
  --retry-after V         send Retry-After: V with that error (seconds, or an HTTP-date)
  --cut-after K           close the connection after K streamed chunks
  --stall-after K         stop sending after K streamed chunks, keep the connection open
  --malformed-tool-calls  cut tool-call arguments short (invalid JSON)
  --fail-every K          apply those faults to every K-th chat request
  --fail-first N          apply them only to the first N chat requests
`

// runSim runs the simulated engine until ctx is cancelled.
func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd, err := parseSimCommand(args, stderr)
	cfg, listen := cmd.cfg, cmd.listen
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, simUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp sim: %v (run reika-lsp sim -h for the flags)\n", err)
		return 2
	}
	if cmd.replicas > 1 {
		return runReplicas(ctx, cmd, stdout, stderr)
	}
	srv, err := sim.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp sim: %v\n", err)
		return 2
	}
	cfg = srv.Config()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp sim: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "sim: %s flavour on http://%s/v1 (window %d tokens)\n", cfg.Flavor, ln.Addr(), cfg.Ctx)
	if cfg.Cache.Kind != sim.CacheDense {
		fmt.Fprintf(stdout, "sim: the slots' model is %s\n", cfg.Cache)
	}
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "reika-lsp sim: %v\n", err)
		return 1
	}
	return 0
}

// simCommand is the sim command line: the engine's configuration, the
// address to listen on, and the router in front of several replicas of
// the engine (Replicas > 1).
type simCommand struct {
	cfg      sim.Config
	listen   string
	replicas int
	route    sim.Route
}

// runReplicas runs cmd.replicas engines behind a router until ctx is
// cancelled.
func runReplicas(ctx context.Context, cmd simCommand, stdout, stderr io.Writer) int {
	r, err := sim.NewReplicas(cmd.cfg, cmd.replicas, cmd.route)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp sim: %v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", cmd.listen)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp sim: %v\n", err)
		return 1
	}
	cfg := r.Servers()[0].Config()
	fmt.Fprintf(stdout, "sim: %d %s replicas behind a %s router on http://%s/v1 (window %d tokens each)\n", cmd.replicas, cfg.Flavor, cmd.route, ln.Addr(), cfg.Ctx)
	if err := r.Serve(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "reika-lsp sim: %v\n", err)
		return 1
	}
	return 0
}

// parseSimFlags turns the command line into a configuration and the
// address to listen on.
func parseSimFlags(args []string, stderr io.Writer) (sim.Config, string, error) {
	c, err := parseSimCommand(args, stderr)
	return c.cfg, c.listen, err
}

// parseSimCommand reads the sim command line.
func parseSimCommand(args []string, stderr io.Writer) (simCommand, error) {
	c, route := simCommand{}, ""
	cfg, listen, err := parseSimEngine(args, stderr, &c.replicas, &route)
	c.cfg, c.listen = cfg, listen
	if err != nil {
		return c, err
	}
	if c.replicas < 1 || c.replicas > 64 {
		return c, fmt.Errorf("--replicas %d: want 1 to 64", c.replicas)
	}
	if c.route, err = sim.ParseRoute(route); err != nil {
		return c, err
	}
	return c, nil
}

// parseSimEngine reads the engine's flags, and the router's into
// replicas and route.
func parseSimEngine(args []string, stderr io.Writer, replicas *int, route *string) (sim.Config, string, error) {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var (
		cfg       sim.Config
		listen    = fs.String("listen", "", "")
		flavor    = fs.String("flavor", "", "")
		eng       = fs.String("engine", "", "")
		script    = fs.String("script", "", "")
		quiet     = fs.Bool("quiet", false, "")
		bodies    = fs.String("bodies", "", "")
		latency   = fs.Duration("latency", 0, "")
		chunkLat  = fs.Duration("chunk-latency", 0, "")
		reasoning = fs.String("reasoning-template", "", "")
		fault     sim.Fault
		failEvery = fs.Int("fail-every", 0, "")
		failFirst = fs.Int("fail-first", 0, "")
	)
	fs.IntVar(&cfg.Ctx, "ctx", sim.DefaultCtx, "")
	fs.StringVar(&cfg.Model, "model", "", "")
	fs.IntVar(&cfg.Slots, "slots", 1, "")
	fs.StringVar(&cfg.SlotSavePath, "slot-save-path", "", "")
	fs.BoolVar(&cfg.Router, "router", false, "")
	fs.IntVar(replicas, "replicas", 1, "")
	fs.StringVar(route, "route", "", "")
	fs.StringVar(&cfg.Root, "root", ".", "")
	fs.IntVar(&cfg.PolicyRounds, "rounds", sim.DefaultPolicyRounds, "")
	fs.DurationVar(&cfg.LoadTime, "load-time", 0, "")
	fs.BoolVar(&cfg.Realtime, "realtime", false, "")
	fs.Float64Var(&cfg.PrefillMSPerToken, "prefill-ms", sim.DefaultPrefillMSPerToken, "")
	fs.Float64Var(&cfg.DecodeMSPerToken, "decode-ms", sim.DefaultDecodeMSPerToken, "")
	fs.IntVar(&cfg.Cache.Window, "swa-window", 0, "")
	fs.IntVar(&cfg.Cache.Checkpoints, "ctx-checkpoints", 0, "")
	fs.IntVar(&cfg.Cache.Ubatch, "ubatch-size", 0, "")
	fs.IntVar(&cfg.Cache.MinStep, "checkpoint-min-step", 0, "")
	fs.IntVar(&cfg.Cache.Block, "block-size", 0, "")
	fs.IntVar(&fault.Status, "fail-status", 0, "")
	fs.BoolVar(&fault.HTML, "html-error", false, "")
	fs.StringVar(&fault.RetryAfter, "retry-after", "", "")
	fs.IntVar(&fault.CutAfter, "cut-after", 0, "")
	fs.IntVar(&fault.StallAfter, "stall-after", 0, "")
	fs.BoolVar(&fault.MalformedToolCalls, "malformed-tool-calls", false, "")
	if err := fs.Parse(args); err != nil {
		return cfg, "", err
	}
	if fs.NArg() > 0 {
		return cfg, "", fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.Ctx <= 0 {
		return cfg, "", fmt.Errorf("--ctx %d: want a positive number of tokens", cfg.Ctx)
	}
	if cfg.Slots <= 0 || cfg.PolicyRounds <= 0 {
		return cfg, "", errors.New("--slots and --rounds must be positive")
	}
	if cfg.PrefillMSPerToken <= 0 || cfg.DecodeMSPerToken <= 0 {
		return cfg, "", errors.New("--prefill-ms and --decode-ms must be positive")
	}
	if *failEvery < 0 || *failFirst < 0 {
		return cfg, "", errors.New("--fail-every and --fail-first must not be negative")
	}
	if cfg.Cache.Window < 0 || cfg.Cache.Checkpoints < 0 || cfg.Cache.Ubatch < 0 || cfg.Cache.Block < 0 {
		return cfg, "", errors.New("--swa-window, --ctx-checkpoints, --ubatch-size and --block-size must not be negative")
	}
	f, err := sim.ParseFlavor(*flavor)
	if err != nil {
		return cfg, "", err
	}
	if cfg.ReasoningTemplate, err = sim.ParseReasoningTemplate(*reasoning); err != nil {
		return cfg, "", err
	}
	cfg.Flavor = f
	if *eng != "" {
		ef, kind, err := sim.ParseEngine(*eng)
		if err != nil {
			return cfg, "", err
		}
		if *flavor != "" && ef != f {
			return cfg, "", fmt.Errorf("--engine %s is the %s flavour, not --flavor %s", *eng, ef, f)
		}
		cfg.Flavor, cfg.Cache.Kind = ef, kind
	}
	if cfg.Cache.Window > 0 && cfg.Cache.Kind != sim.CacheSWA {
		return cfg, "", errors.New("--swa-window is for --engine swa")
	}
	if *script != "" {
		if cfg.Script, err = sim.LoadScript(*script); err != nil {
			return cfg, "", err
		}
	}
	if *latency != 0 || *chunkLat != 0 {
		cfg.Faults = append(cfg.Faults, sim.FaultRule{Fault: sim.Fault{Latency: *latency, ChunkLatency: *chunkLat}})
	}
	if fault.RetryAfter != "" && fault.Status == 0 && !fault.HTML {
		return cfg, "", errors.New("--retry-after needs the error it goes with (--fail-status or --html-error)")
	}
	if !fault.IsZero() {
		cfg.Faults = append(cfg.Faults, sim.FaultRule{Fault: fault, Every: *failEvery, First: *failFirst})
	} else if *failEvery != 0 || *failFirst != 0 {
		return cfg, "", errors.New("--fail-every and --fail-first need a fault (--fail-status, --html-error, --cut-after, --stall-after or --malformed-tool-calls)")
	}
	if !*quiet {
		cfg.Log = stderr
	}
	if *bodies != "" {
		// Open for the process's life: it closes as the process exits.
		f, err := os.OpenFile(*bodies, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return cfg, "", fmt.Errorf("--bodies: %w", err)
		}
		cfg.Bodies = f
	}
	if *listen == "" {
		*listen = cfg.Flavor.DefaultListen()
	}
	if !strings.Contains(*listen, ":") {
		return cfg, "", fmt.Errorf("--listen %q: want HOST:PORT", *listen)
	}
	return cfg, *listen, nil
}
