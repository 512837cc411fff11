package sim

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"hello world", []string{"hello", " world"}},
		{"understanding", []string{"unders", "tandin", "g"}},
		{"parseConfig HTTPServer", []string{"parse", "Config", " HTTP", "Server"}},
		{"parse_config", []string{"parse", "_", "config"}},
		{"x := 12345", []string{"x", " :", "=", " 123", "45"}},
		{"a  b", []string{"a", " ", " b"}},
		{"if x {\n\t\treturn\n}", []string{"if", " x", " {", "\n\t\t", "return", "\n", "}"}},
		{"end  \n\nnext", []string{"end", "  \n\n", "next"}},
		{"<|user|>\nhi<|end|>", []string{"<|user|>", "\n", "hi", "<|end|>"}},
		{"a <b>", []string{"a", " <", "b", ">"}},
		{"日本語", []string{"日", "本", "語"}},
		{"café", []string{"caf", "é"}},
		{"\xff\xfe", []string{"\xff", "\xfe"}},
		{"tab\tx", []string{"tab", "\t", "x"}},
		{"done ", []string{"done", " "}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := Tokenize(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Tokenize(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestTokenizeDensity measures real text: code must come out denser than
// prose, in the ranges a client's chars-per-token learning should meet.
func TestTokenizeDensity(t *testing.T) {
	code, err := os.ReadFile("slots.go")
	if err != nil {
		t.Fatal(err)
	}
	prose := "Reika is a language server that brings a coding agent into any editor that speaks " +
		"the Language Server Protocol. The agent runs against a local engine the user already has, " +
		"and its defining feature is how it manages the model's context window: it keeps every request " +
		"an append of the previous one for as long as it can, so the engine's prefix cache stays warm, " +
		"and when the window fills it sheds old tool output and folds old turns into one recap, in as " +
		"few cache-invalidating events as possible. It was the best of times, it was the worst of times, " +
		"it was the age of wisdom, it was the age of foolishness, it was the epoch of belief."
	ratio := func(s string) float64 { return float64(len(s)) / float64(CountTokens(s)) }
	codeRatio, proseRatio := ratio(string(code)), ratio(prose)
	t.Logf("chars per token: code %.2f, prose %.2f", codeRatio, proseRatio)
	if codeRatio < 2.3 || codeRatio > 3.2 {
		t.Errorf("chars per token of Go code = %.2f, want 2.3…3.2", codeRatio)
	}
	if proseRatio < 3.8 || proseRatio > 5 {
		t.Errorf("chars per token of prose = %.2f, want 3.8…5", proseRatio)
	}
	if codeRatio >= proseRatio {
		t.Errorf("code %.2f chars/token is not denser than prose %.2f", codeRatio, proseRatio)
	}
	cjk := "上下文窗口管理是这个项目的核心"
	if got, want := CountTokens(cjk), len([]rune(cjk)); got != want {
		t.Errorf("CountTokens(%q) = %d, want %d (one token per rune)", cjk, got, want)
	}
}

func FuzzTokenizeLossless(f *testing.F) {
	for _, s := range []string{"", "func main() {\n\tfmt.Println(\"hi\")\n}", "a  b\t\tc \n d", "<|user|> <|end|>", "日本 語", "\xff x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokenize(s)
		if got := strings.Join(toks, ""); got != s {
			t.Fatalf("strings.Join(Tokenize(%q)) = %q, want the input", s, got)
		}
		for _, tok := range toks {
			if tok == "" {
				t.Fatalf("Tokenize(%q) has an empty token", s)
			}
		}
		// Appending after a special token never changes the tokens before it.
		ext := Tokenize(s + "<|end|>more")
		if len(ext) < len(toks) || cmp.Diff(toks, ext[:len(toks)]) != "" {
			t.Fatalf("Tokenize(%q + marker) does not extend Tokenize(%q)", s, s)
		}
	})
}

func BenchmarkTokenize(b *testing.B) {
	code, err := os.ReadFile("policy.go")
	if err != nil {
		b.Fatal(err)
	}
	text := string(code)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Tokenize(text)
	}
}
