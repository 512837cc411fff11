package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reika-lsp/reika/agent/sim"
)

// TestRunSim starts the command in-process on a free port, checks that it
// answers, and that it shuts down cleanly when its context is cancelled.
func TestRunSim(t *testing.T) {
	for _, tt := range []struct {
		flavor, health string
	}{
		{"llamacpp", "/health"},
		{"vllm", "/health"},
		{"ollama", "/api/version"},
	} {
		t.Run(tt.flavor, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			outR, outW := io.Pipe()
			var stderr bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- runSim(ctx, []string{"--listen", "127.0.0.1:0", "--ctx", "4096", "--flavor", tt.flavor, "--root", t.TempDir(), "--quiet"}, outW, &stderr)
				outW.Close()
			}()
			line, err := bufio.NewReader(outR).ReadString('\n')
			if err != nil {
				t.Fatalf("reading the listening line: %v (stderr %q)", err, stderr.String())
			}
			m := regexp.MustCompile(`^sim: (\w+) flavour on (http://127\.0\.0\.1:\d+)/v1 \(window 4096 tokens\)\n$`).FindStringSubmatch(line)
			if m == nil || m[1] != tt.flavor {
				t.Fatalf("listening line = %q, want sim: %s flavour on http://127.0.0.1:PORT/v1 (window 4096 tokens)", line, tt.flavor)
			}
			go io.Copy(io.Discard, outR)
			resp, err := http.Get(m[2] + tt.health)
			if err != nil {
				t.Fatalf("GET %s: %v", tt.health, err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET %s = %d, want 200", tt.health, resp.StatusCode)
			}
			cancel()
			select {
			case code := <-done:
				if code != 0 {
					t.Errorf("runSim after cancel = %d, want 0 (stderr %q)", code, stderr.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatal("runSim did not return after its context was cancelled")
			}
		})
	}
}

func TestRunSimBadFlags(t *testing.T) {
	script := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(script, []byte(`[{"contents": 1}]`), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--ctx", "zero"}, "invalid value"},
		{[]string{"--ctx", "-5"}, "--ctx -5"},
		{[]string{"--flavor", "tgi"}, "unknown flavour"},
		{[]string{"--no-such-flag"}, "not defined"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--fail-every", "3"}, "need a fault"},
		{[]string{"--fail-status", "200"}, "not an HTTP error status"},
		{[]string{"--script", script}, "unknown field"},
		{[]string{"--script", script + ".missing"}, "read script"},
		{[]string{"--listen", "8080"}, "want HOST:PORT"},
		{[]string{"--engine", "mamba"}, "unknown engine"},
		{[]string{"--engine", "swa", "--flavor", "vllm"}, "--engine swa is the llamacpp flavour"},
		{[]string{"--engine", "vllm", "--flavor", "llamacpp"}, "--engine vllm is the vllm flavour"},
		{[]string{"--engine", "recurrent", "--swa-window", "128"}, "--swa-window is for --engine swa"},
		{[]string{"--ctx-checkpoints", "-1"}, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runSim(context.Background(), tt.args, &stdout, &stderr)
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Errorf("runSim(%q) = %d, stderr %q; want 2 and one line containing %q", tt.args, code, stderr.String(), tt.want)
			}
		})
	}
	t.Run("help", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		if code := runSim(context.Background(), []string{"-h"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "--listen ADDR") {
			t.Errorf("runSim(-h) = %d, stdout %q; want 0 and the usage", code, stdout.String())
		}
	})
}

func TestParseSimFlags(t *testing.T) {
	var stderr bytes.Buffer
	cfg, listen, err := parseSimFlags([]string{
		"--flavor", "vllm", "--ctx", "32768", "--slots", "2", "--rounds", "150", "--model", "m", "--slot-save-path", "/tmp/slots",
		"--reasoning-template", "turn", "--latency", "200ms", "--fail-status", "503", "--fail-every", "3", "--cut-after", "5", "--malformed-tool-calls",
	}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if listen != "127.0.0.1:8000" || cfg.Flavor != sim.VLLM || cfg.Ctx != 32768 || cfg.Slots != 2 || cfg.PolicyRounds != 150 || cfg.Model != "m" || cfg.Root != "." || cfg.SlotSavePath != "/tmp/slots" ||
		cfg.ReasoningTemplate != sim.TurnReasoning {
		t.Errorf("parseSimFlags: listen %q cfg %+v", listen, cfg)
	}
	want := []sim.FaultRule{
		{Fault: sim.Fault{Latency: 200 * time.Millisecond}},
		{Fault: sim.Fault{Status: 503, CutAfter: 5, MalformedToolCalls: true}, Every: 3},
	}
	if diff := cmp.Diff(want, cfg.Faults); diff != "" {
		t.Errorf("fault rules (-want +got):\n%s", diff)
	}
	if cfg.Log == nil {
		t.Errorf("Log is nil, want stderr without --quiet")
	}
	if _, _, err := parseSimFlags([]string{"--reasoning-template", "most"}, &stderr); err == nil {
		t.Errorf("parseSimFlags(--reasoning-template most) = nil error, want one")
	}
}

// TestParseSimEngine reads --engine and the cache's flags into the
// configuration: the flavour it implies, the slots' model.
func TestParseSimEngine(t *testing.T) {
	tests := []struct {
		args   []string
		flavor sim.Flavor
		cache  sim.CacheModel
		listen string
	}{
		{nil, sim.LlamaCpp, sim.CacheModel{}, "127.0.0.1:8080"},
		{[]string{"--engine", "dense"}, sim.LlamaCpp, sim.CacheModel{Kind: sim.CacheDense}, "127.0.0.1:8080"},
		{[]string{"--engine", "swa", "--swa-window", "128", "--flavor", "llamacpp"}, sim.LlamaCpp,
			sim.CacheModel{Kind: sim.CacheSWA, Window: 128}, "127.0.0.1:8080"},
		{[]string{"--engine", "recurrent", "--ctx-checkpoints", "8", "--ubatch-size", "256"}, sim.LlamaCpp,
			sim.CacheModel{Kind: sim.CacheRecurrent, Checkpoints: 8, Ubatch: 256}, "127.0.0.1:8080"},
		{[]string{"--engine", "vllm", "--block-size", "32"}, sim.VLLM, sim.CacheModel{Kind: sim.CacheDense, Block: 32}, "127.0.0.1:8000"},
		{[]string{"--flavor", "vllm"}, sim.VLLM, sim.CacheModel{}, "127.0.0.1:8000"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cfg, listen, err := parseSimFlags(tt.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Flavor != tt.flavor || cfg.Cache != tt.cache || listen != tt.listen {
				t.Errorf("parseSimFlags(%q): flavour %q, cache %+v, listen %q; want %q, %+v, %q",
					tt.args, cfg.Flavor, cfg.Cache, listen, tt.flavor, tt.cache, tt.listen)
			}
			if _, err := sim.New(cfg); err != nil {
				t.Errorf("sim.New refused what the flags gave: %v", err)
			}
		})
	}
}

// --retry-after goes with the error status it is sent with.
func TestParseSimRetryAfter(t *testing.T) {
	var stderr bytes.Buffer
	cfg, _, err := parseSimFlags([]string{"--fail-status", "429", "--retry-after", "60", "--fail-first", "1"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	want := []sim.FaultRule{{Fault: sim.Fault{Status: 429, RetryAfter: "60"}, First: 1}}
	if diff := cmp.Diff(want, cfg.Faults); diff != "" {
		t.Errorf("fault rules (-want +got):\n%s", diff)
	}
	if _, _, err := parseSimFlags([]string{"--retry-after", "60"}, &stderr); err == nil || !strings.Contains(err.Error(), "--fail-status or --html-error") {
		t.Errorf("parseSimFlags(--retry-after alone) = %v, want an error naming what it goes with", err)
	}
	bad, _, err := parseSimFlags([]string{"--fail-status", "503", "--retry-after", "a\x7fb"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.New(bad); err == nil {
		t.Errorf("sim.New with a Retry-After that is no header value = nil error, want one")
	}
}

// reika-lsp sim --replicas N --route POLICY puts N engines behind a
// router; a bad count or policy is an error.
func TestSimReplicasFlags(t *testing.T) {
	c, err := parseSimCommand([]string{"--replicas", "4", "--route", "session"}, io.Discard)
	if err != nil || c.replicas != 4 || c.route != sim.SessionRoute {
		t.Errorf("parseSimCommand(--replicas 4 --route session) = %d, %q, %v; want 4, session", c.replicas, c.route, err)
	}
	if c, err := parseSimCommand(nil, io.Discard); err != nil || c.replicas != 1 || c.route != sim.RoundRobin {
		t.Errorf("parseSimCommand() = %d, %q, %v; want one engine, round-robin", c.replicas, c.route, err)
	}
	for _, args := range [][]string{{"--replicas", "0"}, {"--route", "random"}} {
		if _, err := parseSimCommand(args, io.Discard); err == nil {
			t.Errorf("parseSimCommand(%q) = nil error", args)
		}
	}
}
