package engine

// Source says where a figure of a connection came from — the endpoint,
// the model, the window: ID is a stable identifier for programs (check
// --json's *_source fields; new ones may be added, none is renamed),
// Text the sentence for people, which the log and check's report print.
type Source struct {
	ID   string
	Text string
}

// String is the sentence.
func (s Source) String() string { return s.Text }

// The sources discovery knows. A configured value's source comes from the
// settings (the layer that gave it).
var (
	// SourceProbe: the endpoint is the first local engine to answer.
	SourceProbe = Source{"probe", "probe (first engine to answer on the usual local ports)"}

	// SourceConfiguredModel: the model the settings name.
	SourceConfiguredModel = Source{"configured", "configured"}
	// SourceOnlyModel and SourceFirstModel: none is configured; the one
	// the engine serves, or the first it lists.
	SourceOnlyModel  = Source{"engine-only-model", "the engine's only model"}
	SourceFirstModel = Source{"engine-first-model", "the engine's first model"}

	// The engine's own window, by engine and field.
	sourceLlamaModelsNCtx   = Source{"llamacpp-models-n-ctx", "llama.cpp /v1/models meta.n_ctx"}
	sourceLlamaPropsNCtx    = Source{"llamacpp-props-n-ctx", "llama.cpp /props n_ctx"}
	sourceOllamaPS          = Source{"ollama-ps-context-length", "Ollama /api/ps context_length"}
	sourceOllamaShow        = Source{"ollama-show-num-ctx", "Ollama /api/show num_ctx"}
	sourceLMStudioV1        = Source{"lmstudio-v1-loaded-context-length", "LM Studio /api/v1/models loaded context_length"}
	sourceLMStudioV0        = Source{"lmstudio-v0-loaded-context-length", "LM Studio /api/v0/models loaded_context_length"}
	sourceModelsNCtx        = Source{"models-n-ctx", "/v1/models meta.n_ctx"}
	sourceModelsMaxModelLen = Source{"models-max-model-len", "/v1/models max_model_len"}
	sourceModelsContextLen  = Source{"models-context-length", "/v1/models context_length"}
)

// sourceCatalogID is the ID of a window from the embedded catalog; its
// Text names the provider and model.
const sourceCatalogID = "catalog"

// maxModelLenSource is the source of a vLLM or SGLang window: their
// /v1/models max_model_len.
func maxModelLenSource(f Flavor) Source {
	return Source{string(f) + "-max-model-len", f.Name() + " /v1/models max_model_len"}
}
