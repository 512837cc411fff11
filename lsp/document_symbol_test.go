package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/lsp/lsptest"
)

const symbolsGo = `package calc

// Adder adds.
type Adder struct{ n int }

// Add adds a.
func (a *Adder) Add(b int) int { return a.n + b }

// Sum sums.
func Sum(xs ...int) int { return 0 }
`

// textDocument/documentSymbol answers from the repo map (eglot's imenu
// asks for it): DocumentSymbol[] for a client with hierarchical support,
// SymbolInformation[] for one without, each on its definition's line.
func TestDocumentSymbol(t *testing.T) {
	for _, hier := range []bool{true, false} {
		name := map[bool]string{true: "hierarchical", false: "flat"}[hier]
		t.Run(name, func(t *testing.T) {
			caps := lsptest.Full()
			caps.HierarchicalSymbols = hier
			e := lsptest.Start(t, lsptest.Config{Caps: caps, Files: map[string]string{"calc.go": symbolsGo}})
			if !strings.Contains(string(e.InitializeResult), `"documentSymbolProvider":true`) {
				t.Errorf("initialize does not advertise documentSymbolProvider: %s", e.InitializeResult)
			}
			e.Open("calc.go")
			var got []struct {
				Name     string                              `json:"name"`
				Kind     int                                 `json:"kind"`
				Range    *struct{ Start struct{ Line int } } `json:"range"`
				Location *struct {
					URI   string                             `json:"uri"`
					Range struct{ Start struct{ Line int } } `json:"range"`
				} `json:"location"`
			}
			raw, err := e.Call("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": e.URI("calc.go")}}, &got)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, s := range got {
				line := -1
				switch {
				case hier && s.Range != nil:
					line = s.Range.Start.Line
				case !hier && s.Location != nil:
					line = s.Location.Range.Start.Line
				}
				lines = append(lines, s.Name+"@"+string(rune('0'+line)))
			}
			want := "Adder@3 (Adder).Add@6 Sum@9"
			if strings.Join(lines, " ") != want {
				t.Errorf("documentSymbol = %s, want %s (0-based lines)", raw, want)
			}
			var asJSON []map[string]json.RawMessage
			json.Unmarshal(raw, &asJSON)
			for _, s := range asJSON {
				_, hasLoc := s["location"]
				if hasLoc == hier {
					t.Errorf("symbol %s: location given %v, want it only without hierarchical support", s["name"], hasLoc)
				}
			}
		})
	}
}
