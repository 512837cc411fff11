package sim

import (
	"context"
	"net/http"
	"strings"
)

// sseChunk is one "data:" event and the generated tokens it carries.
type sseChunk struct {
	data   []byte
	tokens int
}

// stream writes a completion as server-sent events, flushing after every
// chunk, with the fault's chunk latency, cut or stall. It returns the
// tokens delivered and whether the stream was broken off.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, a answer) (sent int, broken bool) {
	chunks := s.streamChunks(a)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	for i, ch := range chunks {
		wait := a.fault.ChunkLatency
		if s.cfg.Realtime {
			wait += msDuration(float64(ch.tokens) * s.cfg.DecodeMSPerToken)
		}
		if !s.sleep(ctx, wait) {
			return sent, true
		}
		if err := writeEvent(w, rc, ch.data); err != nil {
			return sent, true
		}
		sent += ch.tokens
		if n := i + 1; n == a.fault.CutAfter {
			cutConnection(w)
			return sent, true
		} else if n == a.fault.StallAfter {
			s.hang(ctx)
			return sent, true
		}
	}
	// A cut or stall scheduled after the last chunk still withholds [DONE].
	if a.fault.CutAfter > 0 {
		cutConnection(w)
		return sent, true
	}
	if a.fault.StallAfter > 0 {
		s.hang(ctx)
		return sent, true
	}
	if err := writeEvent(w, rc, []byte("[DONE]")); err != nil {
		return sent, true
	}
	return sent, false
}

func writeEvent(w http.ResponseWriter, rc *http.ResponseController, data []byte) error {
	buf := make([]byte, 0, len(data)+8)
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	return rc.Flush()
}

// streamChunks renders the whole stream: the role, reasoning pieces,
// content pieces, tool calls (name first, then arguments in pieces), the
// finish, and the usage when asked for.
func (s *Server) streamChunks(a answer) []sseChunk {
	var out []sseChunk
	add := func(delta obj, finish any, tokens int) {
		out = append(out, sseChunk{data: mustEncode(s.chunkObj(a, []any{s.choiceObj(delta, finish)}, nil)), tokens: tokens})
	}
	g := a.gen
	add(s.fl.roleDelta(), nil, 0)

	if g.Reasoning != "" {
		pieces := pieces(g.Reasoning)
		counts := spread(g.ReasoningN, pieces)
		for i, p := range pieces {
			add(obj{{s.fl.reasoningKey(), p.text}}, nil, counts[i])
		}
	}
	if g.Content != "" {
		pieces := pieces(g.Content)
		counts := spread(g.ContentN, pieces)
		for i, p := range pieces {
			add(obj{{"content", p.text}}, nil, counts[i])
		}
	}
	for i, tc := range g.ToolCalls {
		args := pieces(tc.Arguments)
		counts := spread(g.CallN[i], append([]piece{{}}, args...))
		head := obj{{"index", i}, {"id", tc.ID}, {"type", "function"},
			{"function", obj{{"name", tc.Name}, {"arguments", ""}}}}
		add(obj{{"tool_calls", []any{head}}}, nil, counts[0])
		for j, p := range args {
			part := obj{{"index", i}, {"function", obj{{"arguments", p.text}}}}
			add(obj{{"tool_calls", []any{part}}}, nil, counts[j+1])
		}
	}

	fig, shown := a.fault.reported(a.fig)
	includeUsage := shown && a.c.req.StreamOptions != nil && a.c.req.StreamOptions.IncludeUsage
	var timings obj
	if shown {
		timings = s.fl.timingsObj(fig) // nil where the engine reports none
	}
	var extra obj
	if timings != nil && !includeUsage {
		extra = obj{{"timings", timings}}
	}
	out = append(out, sseChunk{
		data:   mustEncode(s.chunkObj(a, []any{s.choiceObj(obj{}, g.Finish)}, extra)),
		tokens: g.TailN,
	})
	if includeUsage {
		extra := obj{{"usage", s.fl.usageObj(fig)}}
		if timings != nil {
			extra = append(extra, kv{"timings", timings})
		}
		out = append(out, sseChunk{data: mustEncode(s.chunkObj(a, []any{}, extra))})
	}
	return out
}

// chunkObj is one streamed chunk in the flavour's shape, with extra
// fields (usage, timings) after its own.
func (s *Server) chunkObj(a answer, choices []any, extra obj) obj {
	return append(s.fl.chunkObj(a, choices), extra...)
}

// choiceObj is one streamed choice; an empty finish is sent as null.
func (s *Server) choiceObj(delta obj, finish any) obj {
	if finish == "" {
		finish = nil
	}
	return s.fl.choiceObj(delta, finish)
}

// piece is a few tokens of text streamed in one chunk.
type piece struct {
	text   string
	tokens int
}

// pieces splits text into chunks of 1, 2, 3, 1, 2, 3… tokens.
func pieces(text string) []piece {
	toks := Tokenize(text)
	var out []piece
	for i, size := 0, 1; i < len(toks); size = size%3 + 1 {
		j := min(i+size, len(toks))
		out = append(out, piece{text: strings.Join(toks[i:j], ""), tokens: j - i})
		i = j
	}
	return out
}

// spread shares total tokens among chunks by their own token counts,
// giving the first chunk whatever is left over (a marker, a call's frame),
// so that the counts add up to total.
func spread(total int, ps []piece) []int {
	counts := make([]int, len(ps))
	left := total
	for i := len(ps) - 1; i >= 1; i-- {
		counts[i] = min(ps[i].tokens, left)
		left -= counts[i]
	}
	if len(ps) > 0 {
		counts[0] = left
	}
	return counts
}
