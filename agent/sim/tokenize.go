package sim

import (
	"hash/fnv"
	"strings"
	"unicode/utf8"
)

// The tokenizer imitates a BPE vocabulary closely enough that token counts
// behave like a real model's: prose runs at about 4–5 characters per token,
// code at about 2.5–3, CJK at one character per token. Its rules:
//
//   - a special marker (<|user|>, <|end|>, <tool_call>, <think>, …) is one
//     token;
//   - a single space joins the token that follows it (" word" is one token);
//   - a run of whitespace that holds a newline (newlines plus indentation)
//     is one token, and so is any other run of spaces and tabs;
//   - letters split at camelCase boundaries and every 6 letters;
//   - digits split every 3;
//   - every other ASCII character (punctuation, operators, '_') is its own
//     token, and so is every non-ASCII rune (and every invalid byte).
//
// Tokenizing is lossless: the tokens concatenate back to the text.

// maxLetters is the longest run of letters in one token.
const maxLetters = 6

// specialTokens are the template markers that are one token each, with the
// ids /tokenize reports for them (Phi-3's where it has one).
var specialTokens = []struct {
	text string
	id   int
}{
	{"<|system|>", 32006},
	{"<|user|>", 32010},
	{"<|assistant|>", 32001},
	{"<|tool|>", 32011},
	{"<|end|>", 32007},
	{"<|endoftext|>", 32000},
	{"<tool_call>", 32012},
	{"</tool_call>", 32013},
	{"<think>", 32014},
	{"</think>", 32015},
}

const (
	bosToken = "<s>"
	bosID    = 1
	nVocab   = 32064
)

// Tokenize splits text into tokens the way the simulated engine counts
// them. Tests elsewhere use it to predict the engine's figures; the prompt
// of a chat request is [PromptTokens] of it (a BOS token plus the rendered
// template).
func Tokenize(text string) []string {
	t := tokenizer{text: text, toks: make([]string, 0, len(text)/3+1), pend: -1}
	for i := 0; i < len(text); {
		i = t.next(i)
	}
	t.flushSpace()
	return t.toks
}

// tokenizer is one pass of Tokenize: the text, the tokens so far, and a
// single space held back to join the token that follows it.
type tokenizer struct {
	text string
	toks []string
	pend int // index of the held-back space, or -1
}

// emit appends text[from:to] as a token, the held-back space in front.
func (t *tokenizer) emit(from, to int) {
	if t.pend >= 0 {
		from = t.pend
		t.pend = -1
	}
	t.toks = append(t.toks, t.text[from:to])
}

// flushSpace makes the held-back space a token of its own.
func (t *tokenizer) flushSpace() {
	if t.pend >= 0 {
		t.toks = append(t.toks, t.text[t.pend:t.pend+1])
		t.pend = -1
	}
}

// next tokenizes what starts at text[i] by its first byte and returns
// where the rest starts.
func (t *tokenizer) next(i int) int {
	c := t.text[i]
	switch {
	case c == '<':
		return t.marker(i)
	case c == '\n' || c == '\r':
		j := skipSpace(t.text, i)
		t.emit(i, j)
		return j
	case c == ' ' || c == '\t':
		return t.blanks(i)
	case isLetter(c):
		return t.letters(i)
	case isDigit(c):
		return t.digits(i)
	case c < utf8.RuneSelf:
		t.emit(i, i+1)
		return i + 1
	}
	_, size := utf8.DecodeRuneInString(t.text[i:])
	t.emit(i, i+size)
	return i + size
}

// marker takes a special marker at text[i] as one token (never joined to
// a held-back space), or else the '<' alone.
func (t *tokenizer) marker(i int) int {
	if sp := matchSpecial(t.text[i:]); sp != "" {
		t.flushSpace()
		t.toks = append(t.toks, t.text[i:i+len(sp)])
		return i + len(sp)
	}
	t.emit(i, i+1)
	return i + 1
}

// blanks takes the run of spaces and tabs at text[i].
func (t *tokenizer) blanks(i int) int {
	text := t.text
	j := i
	for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	switch {
	case j < len(text) && (text[j] == '\n' || text[j] == '\r'):
		// Trailing blanks belong to the line break that follows.
		j = skipSpace(text, j)
		t.emit(i, j)
	case j == len(text) || matchSpecial(text[j:]) != "":
		// At the end, or before a marker: the run stands alone, so
		// appending a marker never re-splits it.
		t.emit(i, j)
	case j-i == 1 && text[i] == ' ':
		t.flushSpace()
		t.pend = i
	case text[j-1] == ' ':
		// The run but its last space, which joins the next token.
		t.emit(i, j-1)
		t.pend = j - 1
	default:
		t.emit(i, j)
	}
	return j
}

// letters takes the run of letters at text[i], split at camelCase
// boundaries and every maxLetters letters.
func (t *tokenizer) letters(i int) int {
	text := t.text
	j := i
	for j < len(text) && isLetter(text[j]) {
		j++
	}
	seg, n := i, 0
	for k := i; k < j; k++ {
		if k > seg && (n == maxLetters || caseBoundary(text, k, j)) {
			t.emit(seg, k)
			seg, n = k, 0
		}
		n++
	}
	t.emit(seg, j)
	return j
}

// digits takes the run of digits at text[i], three to a token.
func (t *tokenizer) digits(i int) int {
	text := t.text
	j := i
	for j < len(text) && isDigit(text[j]) {
		j++
	}
	for k := i; k < j; k += 3 {
		t.emit(k, min(k+3, j))
	}
	return j
}

// skipSpace is the end of the run of whitespace that starts at text[i].
func skipSpace(text string, i int) int {
	for i < len(text) && isSpace(text[i]) {
		i++
	}
	return i
}

// CountTokens is len(Tokenize(text)) without keeping the tokens.
func CountTokens(text string) int { return len(Tokenize(text)) }

// PromptTokens is the token sequence the engine evaluates for a rendered
// prompt: a BOS token, then the prompt's tokens.
func PromptTokens(prompt string) []string {
	return append([]string{bosToken}, Tokenize(prompt)...)
}

func matchSpecial(s string) string {
	for _, sp := range specialTokens {
		if strings.HasPrefix(s, sp.text) {
			return sp.text
		}
	}
	return ""
}

// tokenID is the id /tokenize reports for a token: fixed for the special
// tokens, a hash into the rest of the vocabulary for the others.
func tokenID(tok string) int {
	if tok == bosToken {
		return bosID
	}
	for _, sp := range specialTokens {
		if tok == sp.text {
			return sp.id
		}
	}
	h := fnv.New32a()
	h.Write([]byte(tok))
	return 3 + int(h.Sum32()%(32000-3))
}

// caseBoundary reports whether a camelCase word breaks before text[k]
// ("parse|Config", "HTTP|Server"); the letter run ends at end.
func caseBoundary(text string, k, end int) bool {
	if !isUpper(text[k]) {
		return false
	}
	if isLower(text[k-1]) {
		return true
	}
	return isUpper(text[k-1]) && k+1 < end && isLower(text[k+1])
}

func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLower(c byte) bool  { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool  { return 'A' <= c && c <= 'Z' }
func isLetter(c byte) bool { return isLower(c) || isUpper(c) }

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
