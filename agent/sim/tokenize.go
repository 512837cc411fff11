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
	toks := make([]string, 0, len(text)/3+1)
	pend := -1 // index of a single space waiting to join the next token
	emit := func(from, to int) {
		if pend >= 0 {
			from = pend
			pend = -1
		}
		toks = append(toks, text[from:to])
	}
	flushSpace := func() {
		if pend >= 0 {
			toks = append(toks, text[pend:pend+1])
			pend = -1
		}
	}
	i := 0
	for i < len(text) {
		c := text[i]
		switch {
		case c == '<':
			if sp := matchSpecial(text[i:]); sp != "" {
				flushSpace()
				toks = append(toks, text[i:i+len(sp)])
				i += len(sp)
				continue
			}
			emit(i, i+1)
			i++
		case c == '\n' || c == '\r':
			j := i
			for j < len(text) && isSpace(text[j]) {
				j++
			}
			emit(i, j)
			i = j
		case c == ' ' || c == '\t':
			j := i
			for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
				j++
			}
			switch {
			case j < len(text) && (text[j] == '\n' || text[j] == '\r'):
				// Trailing blanks belong to the line break that follows.
				for j < len(text) && isSpace(text[j]) {
					j++
				}
				emit(i, j)
			case j == len(text) || matchSpecial(text[j:]) != "":
				// At the end, or before a marker: the run stands alone,
				// so appending a marker never re-splits it.
				emit(i, j)
			case j-i == 1 && c == ' ':
				flushSpace()
				pend = i
			case text[j-1] == ' ':
				emit(i, j-1)
				pend = j - 1
			default:
				emit(i, j)
			}
			i = j
		case isLetter(c):
			j := i
			for j < len(text) && isLetter(text[j]) {
				j++
			}
			seg, n := i, 0
			for k := i; k < j; k++ {
				if k > seg && (n == maxLetters || caseBoundary(text, k, j)) {
					emit(seg, k)
					seg, n = k, 0
				}
				n++
			}
			emit(seg, j)
			i = j
		case isDigit(c):
			j := i
			for j < len(text) && isDigit(text[j]) {
				j++
			}
			for k := i; k < j; k += 3 {
				emit(k, min(k+3, j))
			}
			i = j
		case c < utf8.RuneSelf:
			emit(i, i+1)
			i++
		default:
			_, size := utf8.DecodeRuneInString(text[i:])
			emit(i, i+size)
			i += size
		}
	}
	flushSpace()
	return toks
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
