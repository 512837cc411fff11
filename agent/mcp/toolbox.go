package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/tools"
)

// Tools is what a Toolbox wraps: the built-in tools.
type Tools interface {
	Definitions() []engine.Tool
	Run(ctx context.Context, call engine.ToolCall) tools.Result
}

// Config is the servers to run and how their calls are asked.
type Config struct {
	Servers []Server
	// Dir is where the servers run: the workspace's root.
	Dir string
	// Environ is the environment they start with; nil: the process's.
	Environ []string
	// Wait bounds a server's start and its tools/list; 0 means 10 s.
	Wait time.Duration
	// CallTimeout bounds a call; 0 means 2 minutes.
	CallTimeout time.Duration
	// Ask puts a call to the user; nil refuses every call. Unasked, when
	// set, says why nobody could be asked (tools.Config.Unasked).
	Ask     tools.Ask
	Unasked func(tools.Question) string
	// Allowed are the tools (mcp__server__tool) whose calls run unasked:
	// the user's mcp_allow. Remember keeps a tool the user answered
	// "always" to in that list; nil offers no "always".
	Allowed  []string
	Remember func(tool string) error
	// Spill saves a long result and keeps its ends (tools.Set.Spill); nil
	// leaves results whole.
	Spill func(tool string, res tools.Result) tools.Result
}

// Prefix starts every MCP tool's name.
const Prefix = "mcp__"

// Notice is what Start tells the user about a server.
type Notice struct {
	Warning bool
	Text    string
}

// Toolbox is the built-in tools and the MCP servers' after them.
type Toolbox struct {
	inner   Tools
	cfg     Config
	cur     atomic.Pointer[toolList] // the definitions in force
	servers []*server

	status []Status

	mu     sync.Mutex
	always map[string]bool // tools allowed always: mcp_allow, and answers
}

// toolList is the tools in force: the definitions, and the servers'
// tools by their definitions' names.
type toolList struct {
	defs   []engine.Tool
	remote map[string]remote
}

// Status is what became of a server at Start.
type Status struct {
	Name  string
	Tools int    // the tools offered
	Error string // why it did not start; "" when it did
}

// Servers says what became of each server at Start, in the configured
// order.
func (b *Toolbox) Servers() []Status { return append([]Status(nil), b.status...) }

// remote is one tool of a server.
type remote struct {
	srv  *server
	name string // as the server names it
}

// Start runs the servers at once and lists their tools, each in at most
// cfg.Wait; a server that fails is a warning and is left out.
func Start(ctx context.Context, inner Tools, cfg Config) (*Toolbox, []Notice) {
	if cfg.Wait <= 0 {
		cfg.Wait = 10 * time.Second
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 2 * time.Minute
	}
	b := &Toolbox{inner: inner, cfg: cfg, always: map[string]bool{}}
	for _, name := range cfg.Allowed {
		b.always[name] = true
	}
	env := environ(cfg.Environ)
	lists := make([][]*sdk.Tool, len(cfg.Servers))
	errs := make([]error, len(cfg.Servers))
	srvs := make([]*server, len(cfg.Servers))
	var wg sync.WaitGroup
	for i, spec := range cfg.Servers {
		srvs[i] = &server{spec: spec, dir: cfg.Dir, environ: env, wait: cfg.Wait}
		srvs[i].onChange = func() { b.relist(srvs[i]) }
		wg.Go(func() {
			cs, err := srvs[i].connect(ctx)
			if err == nil {
				lists[i], err = srvs[i].list(ctx, cs)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, s := range srvs {
		if errs[i] == nil {
			s.tools = lists[i]
			b.servers = append(b.servers, s)
		} else {
			s.close()
		}
	}
	list, counts, skipped := b.build()
	b.cur.Store(list)
	var notices []Notice
	k := 0
	for i, s := range srvs {
		if errs[i] != nil {
			b.status = append(b.status, Status{Name: s.spec.Name, Error: errs[i].Error()})
			fix := "check its entry in mcp_servers"
			if s.spec.FromClient {
				fix = "check the server the editor offered"
			}
			notices = append(notices, Notice{true, fmt.Sprintf("MCP server %s did not start (%v); its tools are left out of this session: %s", s.spec.Name, errs[i], fix)})
			continue
		}
		b.status = append(b.status, Status{Name: s.spec.Name, Tools: counts[k]})
		notices = append(notices, Notice{false, fmt.Sprintf("MCP server %s: %d tools%s; the list is fixed, byte for byte, until a change the server announces, which takes effect at the next fold of the conversation", s.spec.Name, counts[k], skipped[k])})
		k++
	}
	return b, notices
}

// build makes the definitions of the running servers' tools in force:
// the built-in tools', then the config file's servers', then the
// client's, each in the order of their names. It returns how many tools
// each server offers, and those it left out.
func (b *Toolbox) build() (list *toolList, counts []int, skipped []string) {
	list = &toolList{remote: map[string]remote{}}
	var defs, clientDefs []engine.Tool
	for _, s := range b.servers {
		d, left := define(s, s.tools, list.remote)
		if s.spec.FromClient {
			clientDefs = append(clientDefs, d...)
		} else {
			defs = append(defs, d...)
		}
		counts, skipped = append(counts, len(d)), append(skipped, left)
	}
	for _, d := range [][]engine.Tool{defs, clientDefs} {
		sort.Slice(d, func(i, j int) bool { return d[i].Name < d[j].Name })
	}
	list.defs = append(append(b.inner.Definitions(), defs...), clientDefs...)
	return list, counts, skipped
}

// define turns a server's tools into definitions, entered in into,
// noting those left out.
func define(s *server, list []*sdk.Tool, into map[string]remote) (defs []engine.Tool, skipped string) {
	var left []string
	for _, t := range list {
		name := ToolName(s.spec.Name, t.Name)
		schema, err := json.Marshal(t.InputSchema)
		if _, taken := into[name]; taken || err != nil || t.InputSchema == nil {
			left = append(left, t.Name)
			continue
		}
		into[name] = remote{srv: s, name: t.Name}
		desc := strings.TrimSpace(t.Description)
		if len(desc) > maxDescription {
			desc = strings.ToValidUTF8(desc[:maxDescription], "") + "…"
		}
		defs = append(defs, engine.Tool{
			Name:        name,
			Description: fmt.Sprintf("A tool of the MCP server %s (%s); each call asks the user. %s", s.spec.Name, t.Name, desc),
			Parameters:  schema,
		})
	}
	if len(left) > 0 {
		skipped = fmt.Sprintf(" (left out, a name taken or no input schema: %s)", strings.Join(left, ", "))
	}
	return defs, skipped
}

// maxDescription bounds a tool's description in the prefix, in bytes.
const maxDescription = 2000

// ToolName is the definition's name of a server's tool: mcp__server__tool
// in the characters engines take in a name (others become '_'), at most
// 64 bytes.
func ToolName(server, tool string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
				return r
			}
			return '_'
		}, s)
	}
	name := Prefix + clean(server) + "__" + clean(tool)
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// Definitions are the built-in tools' then the servers', in force until a
// change the servers announced is taken (TakeChange).
func (b *Toolbox) Definitions() []engine.Tool {
	cur := b.cur.Load().defs
	defs := make([]engine.Tool, len(cur))
	for i, d := range cur {
		d.Parameters = append(json.RawMessage(nil), d.Parameters...)
		defs[i] = d
	}
	return defs
}

// Close stops the servers.
func (b *Toolbox) Close() error {
	var wg sync.WaitGroup
	for _, s := range b.servers {
		wg.Go(s.close)
	}
	wg.Wait()
	return nil
}
