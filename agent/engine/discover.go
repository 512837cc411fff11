package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reika-lsp/reika/agent/engine/catalog"
	"github.com/reika-lsp/reika/contextwin"
)

// Discovery is what an endpoint says about itself, and the context window
// Reika will work within.
type Discovery struct {
	Endpoint string
	Flavor   Flavor
	Version  string // the engine's build or version, when it says

	Models      []string // what the engine serves, in its order
	Model       string   // the model requests will name
	ModelSource Source

	// Window is the context window in tokens, 0 when nothing gave one;
	// WindowSource says where it came from.
	Window       int
	WindowSource Source
	// EngineWindow is what the engine itself reported, even when a
	// configured window takes precedence.
	EngineWindow       int
	EngineWindowSource Source
	// TrainedWindow is the model's trained length, for information only:
	// it is not the usable window.
	TrainedWindow int
	// OutputLimit caps a reply, from the catalog; 0 when unknown.
	OutputLimit int
	// Slots is llama.cpp's number of parallel slots.
	Slots int
	// Router is set when the endpoint is llama.cpp's router mode (one
	// server, many models, each run by a child llama-server it loads,
	// puts to sleep and unloads): its /v1/models entries carry a status,
	// and the model's own facts come from /props?model=. ModelStatus is
	// the chosen model's status at discovery (ModelLoaded, …).
	Router      bool
	ModelStatus string
	// TruncationRisk is set when the engine silently cuts prompts that do
	// not fit (Ollama): it says why and what to do.
	TruncationRisk string
	// Warnings are things the user should fix or know.
	Warnings []string

	// Cache is how the engine reuses its prompt cache for the model (the
	// planner's starting belief), CacheSource where that came from: the
	// setting, else what the engine told (EngineCache).
	Cache       contextwin.CacheModel
	CacheSource Source
	// EngineCache is what the engine's side told of its cache, even when
	// a setting forces another; CacheUnknown when it told nothing.
	EngineCache       contextwin.CacheModel
	EngineCacheSource Source
	// Architecture is the model's general.architecture (the GGUF header,
	// Ollama's model_info), "" when unknown.
	Architecture string
	// Reasoning is what the engine's chat template renders of the
	// reasoning sent back (llama.cpp's /props: its caps and its text;
	// templateReasoning), ReasoningUnknown when the engine does not say.
	Reasoning contextwin.ReasoningTemplate
	// ReasoningKwargs, when the template has a switch that keeps every
	// message's reasoning (preserving), are the chat_template_kwargs that
	// turn it on: Connect sends them with every request (beside the
	// settings' own kwargs, which win) and Reasoning is then ReasoningAll.
	ReasoningKwargs map[string]any
	// Images says the model takes pictures (image content parts), as the
	// engine tells: llama.cpp's /props modalities.vision (a model loaded
	// with its mmproj), Ollama's /api/show capability "vision".
	// ImagesSource names the answer that told it, "" when none did (vLLM
	// and hosted endpoints do not say).
	Images       bool
	ImagesSource string
	// SWAFullMiB is about how much more memory llama-server's --swa-full
	// takes for a sliding-window model at this window (swaFullBytes); 0
	// when the model's header does not give the figures.
	SWAFullMiB int
}

// Configured is what the user's settings already say about the window.
type Configured struct {
	Window       int    // 0: not configured
	WindowSource Source // the setting's layer, e.g. "env REIKA_CONTEXT_WINDOW"
	// Cache, when its Class is set, is the cache model the settings force
	// (cache_class, swa_window); CacheSource is the setting's layer.
	Cache       contextwin.CacheModel
	CacheSource Source
	// MinStep is llama-server's --checkpoint-min-step as the settings
	// give it (checkpoint_min_step), 0 when they do not: no engine tells
	// it.
	MinStep int
	// Block is a blocks or boundary engine's block as the settings give it
	// (cache_block) beside a class discovery finds, 0 when they do not.
	Block int
}

// NoWindowWarning is the startup warning when no source gives a window.
func NoWindowWarning(endpoint string) string {
	return fmt.Sprintf("no context window known for %s: set REIKA_CONTEXT_WINDOW (or context_window in the profile) "+
		"to the engine's context size; until then nothing is shed or folded", endpoint)
}

// Discover asks the endpoint what it is, which models it serves and how
// large its window is, taking the window from the first source that
// gives one (README.md, "Engines"): the configured window, then the
// engine's own figure, then — for a hosted endpoint only — the embedded
// models.dev catalog. Only opts.BaseURL's host is ever contacted.
//
// It fails only when the endpoint cannot be used at all (unreachable,
// refusing the key, not an OpenAI-compatible server, still loading); lesser
// problems are Warnings.
func Discover(ctx context.Context, opts Options, conf Configured) (*Discovery, error) {
	d := newDiscoverer(opts)
	base := strings.TrimRight(opts.BaseURL, "/")
	out := &Discovery{Endpoint: base}
	local := IsLocalHost(hostOf(base))
	ml, err := d.listModels(ctx, base, local, out)
	if err != nil {
		return nil, err
	}
	chooseModel(opts.Model, out)
	entry := ml.entry(out.Model)
	d.engineWindow(ctx, base, entry, out)
	var catalogWindow int
	var catalogSource Source
	if !local {
		catalogWindow, catalogSource = catalogLookup(base, out)
	}
	switch {
	case conf.Window > 0:
		out.Window, out.WindowSource = conf.Window, conf.WindowSource
		if out.EngineWindow > 0 && conf.Window > out.EngineWindow {
			out.Warnings = append(out.Warnings, fmt.Sprintf("the configured window (%d, %s) is larger than the engine's (%d, %s): "+
				"prompts past %d tokens will fail; lower it", conf.Window, conf.WindowSource, out.EngineWindow, out.EngineWindowSource, out.EngineWindow))
		}
	case out.EngineWindow > 0:
		out.Window, out.WindowSource = out.EngineWindow, out.EngineWindowSource
	case catalogWindow > 0:
		out.Window, out.WindowSource = catalogWindow, catalogSource
	default:
		out.Warnings = append(out.Warnings, NoWindowWarning(base))
	}
	if out.Flavor == Ollama {
		out.TruncationRisk = ollamaRisk(out)
	}
	d.engineCache(ctx, base, out)
	out.Cache, out.CacheSource = out.EngineCache, out.EngineCacheSource
	if conf.Cache.Class != "" {
		out.Cache, out.CacheSource = conf.Cache, conf.CacheSource
	}
	if conf.MinStep > 0 {
		out.Cache.MinStep = conf.MinStep
	}
	if c := out.Cache.Class; conf.Block > 0 && (c == contextwin.CacheBlocks || c == contextwin.CacheBoundary) {
		out.Cache.Block = conf.Block
	}
	return out, nil
}

// engineCache finds what the engine tells of its cache: llama.cpp's model
// file (found by engineWindow), Ollama's model_info, vLLM's and SGLang's
// block sizes; CacheUnknown from any other.
func (d *discoverer) engineCache(ctx context.Context, base string, out *Discovery) {
	switch out.Flavor {
	case LlamaCpp:
		llamaCache(d.modelPath, out.EngineWindow, out.Slots, out)
	case Ollama:
		if d.modelInfo != nil {
			ollamaCache(d.modelInfo, out)
		} else {
			out.EngineCacheSource = Source{sourceCacheUnknown.ID, "Ollama /api/show gave no model_info"}
		}
	case VLLM:
		d.vllmCache(ctx, base, out)
	case SGLang:
		d.sglangCache(ctx, base, out)
	}
	if out.EngineCache.Class == "" {
		out.EngineCache.Class = contextwin.CacheUnknown
		if out.EngineCacheSource == (Source{}) {
			out.EngineCacheSource = sourceCacheUnknown
		}
	}
}

// listModels asks the endpoint for its models and tells its flavour from
// the answer, or from the local engines' own endpoints.
func (d *discoverer) listModels(ctx context.Context, base string, local bool, out *Discovery) (modelList, error) {
	var ml modelList
	err := d.getJSON(ctx, base+"/models", "GET /models", &ml)
	switch {
	case err == nil:
	case !local && isKind(err, NotFound):
		// Some hosted services do not list models; the catalog may still
		// know the window.
		out.Warnings = append(out.Warnings, fmt.Sprintf("%s does not list its models (GET /models: 404)", base))
	default:
		return ml, err
	}
	for _, m := range ml.Data {
		if m.ID != "" {
			out.Models = append(out.Models, m.ID)
		}
	}
	out.Flavor = ml.flavor()
	if out.Flavor == FlavorUnknown {
		if local {
			out.Flavor = d.sniffLocal(ctx, base)
		} else {
			out.Flavor = Hosted
		}
	}
	return ml, nil
}

// chooseModel takes the configured model, else the engine's only or first
// one, and warns when the choice is doubtful.
func chooseModel(configured string, out *Discovery) {
	base := out.Endpoint
	switch {
	case configured != "":
		out.Model, out.ModelSource = configured, SourceConfiguredModel
		if len(out.Models) > 0 && !containsFold(out.Models, configured) && (out.Flavor != LlamaCpp || out.Router) {
			// llama.cpp serves its one model under any name (its router
			// only those it lists); others refuse names they do not know.
			out.Warnings = append(out.Warnings, fmt.Sprintf("model %q is not among those %s serves (%s); set REIKA_MODEL to one of them",
				configured, base, strings.Join(firstN(out.Models, 8), ", ")))
		}
	case len(out.Models) == 1:
		out.Model, out.ModelSource = out.Models[0], SourceOnlyModel
	case len(out.Models) > 1:
		out.Model, out.ModelSource = out.Models[0], SourceFirstModel
		out.Warnings = append(out.Warnings, fmt.Sprintf("%s serves %d models and none is configured; using %q (set REIKA_MODEL to choose)",
			base, len(out.Models), out.Models[0]))
	default:
		out.Warnings = append(out.Warnings, fmt.Sprintf("%s lists no models; set REIKA_MODEL", base))
	}
}

// engineWindow finds the window the engine itself reports: by its
// flavour's own endpoints, then any known field of its model entry. An
// implausible figure is dropped with a warning.
func (d *discoverer) engineWindow(ctx context.Context, base string, entry *modelEntry, out *Discovery) {
	switch out.Flavor {
	case LlamaCpp:
		d.llamaWindow(ctx, base, entry, out)
	case VLLM, SGLang:
		if entry != nil && entry.MaxModelLen > 0 {
			out.EngineWindow, out.EngineWindowSource = entry.MaxModelLen, maxModelLenSource(out.Flavor)
		}
	case Ollama:
		d.ollamaWindow(ctx, base, out)
	case LMStudio:
		d.lmstudioWindow(ctx, base, out)
	}
	if out.EngineWindow == 0 && entry != nil {
		// Any server that copies one of the known fields.
		switch {
		case entry.Meta != nil && entry.Meta.NCtx > 0:
			out.EngineWindow, out.EngineWindowSource = entry.Meta.NCtx, sourceModelsNCtx
		case entry.MaxModelLen > 0:
			out.EngineWindow, out.EngineWindowSource = entry.MaxModelLen, sourceModelsMaxModelLen
		case entry.ContextLength > 0:
			out.EngineWindow, out.EngineWindowSource = entry.ContextLength, sourceModelsContextLen
		}
	}
	if out.EngineWindow != 0 && !plausibleWindow(out.EngineWindow) {
		out.Warnings = append(out.Warnings, fmt.Sprintf("the engine reports a window of %d tokens (%s), which cannot be right; ignored: set REIKA_CONTEXT_WINDOW",
			out.EngineWindow, out.EngineWindowSource))
		out.EngineWindow, out.EngineWindowSource = 0, Source{}
	}
	if entry != nil && entry.Meta != nil && entry.Meta.NCtxTrain > 0 && out.TrainedWindow == 0 {
		out.TrainedWindow = entry.Meta.NCtxTrain
	}
}

// catalogLookup is a hosted model's window in the embedded catalog, and
// its output limit (set in out); 0 when the catalog does not know it.
func catalogLookup(base string, out *Discovery) (int, Source) {
	m, ok := catalog.Lookup(hostOf(base), out.Model)
	if !ok || !plausibleWindow(m.Limits.Context) {
		return 0, Source{}
	}
	out.OutputLimit = m.Limits.Output
	return m.Limits.Context, Source{sourceCatalogID, fmt.Sprintf("models.dev catalog (%s/%s)", m.Provider, m.Model)}
}

// plausibleWindow reports whether n tokens can be a real window: the same
// bounds a setting must keep.
func plausibleWindow(n int) bool { return n >= contextwin.MinWindow && n <= contextwin.MaxWindow }

func ollamaRisk(d *Discovery) string {
	if d.EngineWindow > 0 {
		s := fmt.Sprintf("Ollama silently drops the oldest messages of a prompt longer than its context (%d tokens, %s) and still answers",
			d.EngineWindow, d.EngineWindowSource)
		if d.Window > d.EngineWindow {
			s += "; the configured window is larger, so it will: lower REIKA_CONTEXT_WINDOW"
		}
		return s
	}
	return "Ollama silently drops the oldest messages of a prompt longer than its context and still answers; " +
		"set REIKA_CONTEXT_WINDOW to the model's num_ctx, or raise num_ctx (OLLAMA_CONTEXT_LENGTH)"
}

type discoverer struct {
	opts Options
	t    Timeouts
	http *http.Client
	// What the window's calls also told of the model: llama.cpp's
	// /props model_path, Ollama's /api/show model_info.
	modelPath string
	modelInfo map[string]any
}

// newDiscoverer is a discoverer of the engine opts names, at its
// timeouts.
func newDiscoverer(opts Options) *discoverer {
	return &discoverer{opts: opts, t: opts.Timeouts.withDefaults(), http: opts.httpClient()}
}

// maxMetadataBody bounds what a metadata call may return (Ollama's
// /api/show can carry a whole vocabulary).
const maxMetadataBody = 64 << 20

// getJSON fetches url and decodes its JSON body into v. Every failure is an
// *Error naming the endpoint and the op.
func (d *discoverer) getJSON(ctx context.Context, url, op string, v any) error {
	return d.doJSON(ctx, http.MethodGet, url, op, nil, v)
}

func (d *discoverer) doJSON(ctx context.Context, method, url, op string, body io.Reader, v any) error {
	ctx, cancel := context.WithTimeout(ctx, d.t.Probe)
	defer cancel()
	endpoint := strings.TrimRight(d.opts.BaseURL, "/")
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return &Error{Kind: BadRequest, Endpoint: endpoint, Op: op, Err: err}
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if d.opts.APIKey != "" && hostOf(url) == hostOf(d.opts.BaseURL) {
		req.Header.Set("Authorization", "Bearer "+d.opts.APIKey)
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return classifyTransport(endpoint, op, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBody))
	if err != nil {
		return classifyTransport(endpoint, op, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := classifyHTTP(endpoint, op, resp.StatusCode, data)
		e.RetryAfter = retryAfter(resp.Header, time.Now())
		return e
	}
	if err := json.Unmarshal(data, v); err != nil {
		what := describeBody(data)
		if what == "" {
			what = "an empty body"
		}
		return &Error{Kind: BadResponse, Endpoint: endpoint, Op: op, Status: resp.StatusCode,
			Message: "answered " + what + " where JSON was expected", Err: err}
	}
	return nil
}

// sniffLocal asks a local server that did not name itself in /v1/models
// for the paths only one engine serves. Failures only mean "not this one".
func (d *discoverer) sniffLocal(ctx context.Context, base string) Flavor {
	root := rootOf(base)
	var props llamaProps
	if d.getJSON(ctx, root+"/props", "GET /props", &props) == nil && props.window() > 0 {
		return LlamaCpp
	}
	var ver struct {
		Version string `json:"version"`
	}
	if d.getJSON(ctx, root+"/api/version", "GET /api/version", &ver) == nil && ver.Version != "" {
		return Ollama
	}
	var lm lmstudioV0
	if d.getJSON(ctx, root+"/api/v0/models", "GET /api/v0/models", &lm) == nil && len(lm.Data) > 0 {
		return LMStudio
	}
	return Generic
}

// modelList is GET /v1/models as every engine writes it; every field is
// optional.
type modelList struct {
	Data []modelEntry `json:"data"`
	// llama.cpp also sends an Ollama-style "models" list.
	Models []json.RawMessage `json:"models"`
}

type modelEntry struct {
	ID      string `json:"id"`
	OwnedBy string `json:"owned_by"`
	// llama.cpp.
	Meta *struct {
		NCtx      int `json:"n_ctx"`
		NCtxTrain int `json:"n_ctx_train"`
	} `json:"meta"`
	// vLLM, SGLang.
	MaxModelLen int `json:"max_model_len"`
	// OpenRouter, Together and other routers.
	ContextLength int `json:"context_length"`
	// llama.cpp's router mode: {"value": "loaded", "args": […]}, and the
	// child's n_ctx beside it once it runs (routerEntry).
	Status json.RawMessage `json:"status"`
	NCtx   int             `json:"n_ctx"`
}

func (ml modelList) flavor() Flavor {
	for _, m := range ml.Data {
		switch strings.ToLower(m.OwnedBy) {
		case "llamacpp":
			return LlamaCpp
		case "vllm":
			return VLLM
		case "sglang":
			return SGLang
		case "library", "ollama":
			return Ollama
		case "organization_owner":
			return LMStudio
		}
		if m.Meta != nil || m.routerStatus() != "" {
			return LlamaCpp
		}
	}
	return FlavorUnknown
}

// entry returns the listing of model, or the first one when the name is
// not listed (llama.cpp answers to any name).
func (ml modelList) entry(model string) *modelEntry {
	for i := range ml.Data {
		if ml.Data[i].ID == model {
			return &ml.Data[i]
		}
	}
	for i := range ml.Data {
		if strings.EqualFold(ml.Data[i].ID, model) {
			return &ml.Data[i]
		}
	}
	if len(ml.Data) > 0 {
		return &ml.Data[0]
	}
	return nil
}

// llamaProps is GET /props.
type llamaProps struct {
	DefaultGenerationSettings struct {
		NCtx int `json:"n_ctx"`
	} `json:"default_generation_settings"`
	NCtx       int    `json:"n_ctx"` // some builds put it at the top
	TotalSlots int    `json:"total_slots"`
	BuildInfo  string `json:"build_info"`
	ModelPath  string `json:"model_path"`
	// ChatTemplate and ChatTemplateCaps tell what the template renders
	// of the reasoning sent back (templateReasoning).
	ChatTemplate     string         `json:"chat_template"`
	ChatTemplateCaps map[string]any `json:"chat_template_caps"` // any: a field of another type must not fail /props
	// Modalities are what the model takes besides text.
	Modalities *struct {
		Vision bool `json:"vision"`
	} `json:"modalities"`
}

func (p llamaProps) window() int {
	if p.DefaultGenerationSettings.NCtx > 0 {
		return p.DefaultGenerationSettings.NCtx
	}
	return p.NCtx
}

// llamaWindow takes the per-slot window from /v1/models meta.n_ctx on new
// builds, then from /props; /props also gives the slot count and build.
func (d *discoverer) llamaWindow(ctx context.Context, base string, entry *modelEntry, out *Discovery) {
	if entry != nil && entry.Meta != nil && entry.Meta.NCtx > 0 {
		out.EngineWindow, out.EngineWindowSource = entry.Meta.NCtx, sourceLlamaModelsNCtx
	}
	props := rootOf(base) + "/props"
	if st := entry.routerStatus(); st != "" {
		out.Router, out.ModelStatus = true, st
		if out.EngineWindow == 0 && entry.NCtx > 0 {
			out.EngineWindow, out.EngineWindowSource = entry.NCtx, sourceLlamaModelsNCtx
		}
		props = routerProps(base, out.Model)
	}
	var p llamaProps
	if err := d.getJSON(ctx, props, "GET /props", &p); err != nil {
		if out.EngineWindow == 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("llama.cpp did not give its window: %v", err))
		}
		return
	}
	out.Slots, out.Version = p.TotalSlots, p.BuildInfo
	d.modelPath = p.ModelPath
	if p.Modalities != nil {
		out.Images, out.ImagesSource = p.Modalities.Vision, "llama.cpp /props modalities.vision"
	}
	out.Reasoning = templateReasoning(p.ChatTemplate, p.ChatTemplateCaps)
	if out.Reasoning != contextwin.ReasoningDrop {
		out.ReasoningKwargs = preserving(p.ChatTemplate)
	}
	if out.EngineWindow == 0 && p.window() > 0 {
		out.EngineWindow, out.EngineWindowSource = p.window(), sourceLlamaPropsNCtx
	}
}

// ollamaWindow prefers the context a loaded model really runs with
// (/api/ps), then the num_ctx its parameters set (/api/show).
func (d *discoverer) ollamaWindow(ctx context.Context, base string, out *Discovery) {
	root := rootOf(base)
	var ver struct {
		Version string `json:"version"`
	}
	if d.getJSON(ctx, root+"/api/version", "GET /api/version", &ver) == nil {
		out.Version = ver.Version
	}
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if d.getJSON(ctx, root+"/api/ps", "GET /api/ps", &ps) == nil {
		for _, m := range ps.Models {
			if (sameOllamaModel(m.Name, out.Model) || sameOllamaModel(m.Model, out.Model)) && m.ContextLength > 0 {
				out.EngineWindow, out.EngineWindowSource = m.ContextLength, sourceOllamaPS
				break
			}
		}
	}
	if out.Model == "" {
		return
	}
	body, _ := json.Marshal(map[string]string{"model": out.Model})
	var show struct {
		Parameters   string         `json:"parameters"`
		ModelInfo    map[string]any `json:"model_info"`
		Capabilities []string       `json:"capabilities"`
	}
	if err := d.doJSON(ctx, http.MethodPost, root+"/api/show", "POST /api/show", strings.NewReader(string(body)), &show); err != nil {
		return
	}
	d.modelInfo = show.ModelInfo
	if show.Capabilities != nil {
		out.Images, out.ImagesSource = slices.Contains(show.Capabilities, "vision"), "Ollama /api/show capabilities"
	}
	if out.EngineWindow == 0 {
		if n := numCtx(show.Parameters); n > 0 {
			out.EngineWindow, out.EngineWindowSource = n, sourceOllamaShow
		}
	}
	if arch, ok := show.ModelInfo["general.architecture"].(string); ok {
		if n, ok := show.ModelInfo[arch+".context_length"].(float64); ok {
			out.TrainedWindow = int(n)
		}
	}
}

// sameOllamaModel compares Ollama names, where "qwen3" means "qwen3:latest".
func sameOllamaModel(a, b string) bool {
	norm := func(s string) string {
		if s != "" && !strings.Contains(s, ":") {
			return s + ":latest"
		}
		return s
	}
	return a != "" && norm(a) == norm(b)
}

// numCtx reads "num_ctx N" out of Ollama's newline-separated parameters.
func numCtx(params string) int {
	for line := range strings.Lines(params) {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.Atoi(f[1]); err == nil {
				return n
			}
		}
	}
	return 0
}

type lmstudioV0 struct {
	Data []struct {
		ID                  string `json:"id"`
		State               string `json:"state"`
		MaxContextLength    int    `json:"max_context_length"`
		LoadedContextLength int    `json:"loaded_context_length"`
	} `json:"data"`
}

// lmstudioWindow prefers the length the model is loaded with; the maximum
// it supports is only its trained length.
func (d *discoverer) lmstudioWindow(ctx context.Context, base string, out *Discovery) {
	root := rootOf(base)
	var v1 struct {
		Models []struct {
			Key             string `json:"key"`
			LoadedInstances []struct {
				ID     string `json:"id"`
				Config struct {
					ContextLength int `json:"context_length"`
				} `json:"config"`
			} `json:"loaded_instances"`
			MaxContextLength int `json:"max_context_length"`
		} `json:"models"`
	}
	if d.getJSON(ctx, root+"/api/v1/models", "GET /api/v1/models", &v1) == nil {
		for _, m := range v1.Models {
			for _, inst := range m.LoadedInstances {
				if (inst.ID == out.Model || m.Key == out.Model) && inst.Config.ContextLength > 0 {
					out.EngineWindow, out.EngineWindowSource = inst.Config.ContextLength, sourceLMStudioV1
					out.TrainedWindow = m.MaxContextLength
					return
				}
			}
			if m.Key == out.Model {
				out.TrainedWindow = m.MaxContextLength
			}
		}
	}
	var v0 lmstudioV0
	if d.getJSON(ctx, root+"/api/v0/models", "GET /api/v0/models", &v0) == nil {
		for _, m := range v0.Data {
			if m.ID != out.Model {
				continue
			}
			out.TrainedWindow = m.MaxContextLength
			if m.LoadedContextLength > 0 {
				out.EngineWindow, out.EngineWindowSource = m.LoadedContextLength, sourceLMStudioV0
				return
			}
			if m.State != "loaded" {
				out.Warnings = append(out.Warnings, fmt.Sprintf("LM Studio has not loaded %q yet; it will load it with its default context length: "+
					"load it first, or set REIKA_CONTEXT_WINDOW", out.Model))
			}
		}
	}
}

// LocalPorts are the loopback ports Reika tries, in order, when no
// endpoint is configured.
var LocalPorts = []struct {
	Port   int
	Engine string
}{
	{8080, "llama.cpp"},
	{8000, "vLLM"},
	{30000, "SGLang"},
	{11434, "Ollama"},
	{1234, "LM Studio"},
}

// FindLocal probes the usual loopback ports at once and returns the base
// URL of the first in LocalPorts' order that answers GET /v1/models like
// an OpenAI-compatible server (a model still loading counts as an answer).
func FindLocal(ctx context.Context, opts Options) (string, error) {
	type result struct {
		base string
		ok   bool
	}
	results := make([]chan result, len(LocalPorts))
	probe := opts
	t := opts.Timeouts.withDefaults()
	probe.Timeouts.Probe = min(t.Probe, 2*time.Second)
	for i, p := range LocalPorts {
		results[i] = make(chan result, 1)
		go func() {
			base := fmt.Sprintf("http://127.0.0.1:%d/v1", p.Port)
			probe := probe
			probe.BaseURL = base
			d := newDiscoverer(probe)
			var ml modelList
			err := d.getJSON(ctx, base+"/models", "GET /models", &ml)
			results[i] <- result{base, err == nil || isKind(err, Loading) || isKind(err, Auth)}
		}()
	}
	var tried []string
	for i, p := range LocalPorts {
		r := <-results[i]
		if r.ok {
			return r.base, nil
		}
		tried = append(tried, fmt.Sprintf("%d (%s)", p.Port, p.Engine))
	}
	return "", fmt.Errorf("no endpoint is configured and no engine answered on 127.0.0.1 ports %s: "+
		"start one, or set REIKA_ENDPOINT", strings.Join(tried, ", "))
}

func isKind(err error, k Kind) bool { return errors.Is(err, k) }

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func firstN(list []string, n int) []string {
	return list[:min(n, len(list))]
}
