package repomap

import (
	"path"
	"strings"
	"sync"

	ts "github.com/tree-sitter/go-tree-sitter"
	tsgo "github.com/tree-sitter/tree-sitter-go/bindings/go"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tspy "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsrs "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	tsts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// A language is one grammar and what the map knows about it: the node
// kinds by id, the field ids the extractor asks for, how to find
// identifiers in its text, and which of them are keywords.
type language struct {
	name    string
	grammar func() *ts.Language
	// decl extracts the definitions in one top-level node.
	decl    func(x *extractor, n *ts.Node)
	lex     lexStyle
	keyword map[string]bool

	once   sync.Once
	ts     *ts.Language
	kinds  []string // node kind id → name
	fields fieldIDs
}

// fieldIDs are the grammar's ids of the fields the extractor reads; 0 when
// the grammar has no such field.
type fieldIDs struct {
	name, body, typ, value, declaration, definition, receiver, left, function uint16
}

// load resolves the grammar's tables, once.
func (l *language) load() *language {
	l.once.Do(func() {
		l.ts = l.grammar()
		n := l.ts.NodeKindCount()
		l.kinds = make([]string, n)
		for i := range n {
			l.kinds[i] = l.ts.NodeKindForId(uint16(i))
		}
		f := l.ts.FieldIdForName
		l.fields = fieldIDs{
			name: f("name"), body: f("body"), typ: f("type"), value: f("value"),
			declaration: f("declaration"), definition: f("definition"),
			receiver: f("receiver"), left: f("left"), function: f("function"),
		}
	})
	return l
}

// kind is the name of a node kind id; "ERROR" for the error symbol.
func (l *language) kind(id uint16) string {
	if int(id) < len(l.kinds) {
		return l.kinds[id]
	}
	if id == 0xFFFF {
		return "ERROR"
	}
	return ""
}

func words(s string) map[string]bool {
	m := make(map[string]bool)
	for w := range strings.FieldsSeq(s) {
		m[w] = true
	}
	return m
}

// Keywords are left out of a file's references: they never name a
// definition. Contextual words (get, set, type, async in JavaScript…) stay
// in, because they can.
var (
	goKeywords = words(`break case chan const continue default defer else fallthrough for func go
		goto if import interface map package range return select struct switch type var nil true false iota`)
	pyKeywords = words(`False None True and as assert async await break class continue def del elif
		else except finally for from global if import in is lambda nonlocal not or pass raise return
		try while with yield self cls`)
	jsKeywords = words(`break case catch class const continue debugger default delete do else export
		extends finally for function if import in instanceof let new return super switch this throw
		try typeof var void while with yield null undefined true false`)
	tsKeywords = words(`break case catch class const continue debugger default delete do else export
		extends finally for function if import in instanceof let new return super switch this throw
		try typeof var void while with yield null undefined true false interface enum implements
		private protected public readonly abstract keyof any number string boolean never unknown`)
	rsKeywords = words(`as async await break const continue crate dyn else enum extern false fn for if
		impl in let loop match mod move mut pub ref return self Self static struct super trait true
		type unsafe use where while`)
)

var (
	langGo = &language{name: "go", lex: lexGo, keyword: goKeywords, decl: declGo,
		grammar: func() *ts.Language { return ts.NewLanguage(tsgo.Language()) }}
	langPython = &language{name: "python", lex: lexPython, keyword: pyKeywords, decl: declPython,
		grammar: func() *ts.Language { return ts.NewLanguage(tspy.Language()) }}
	langJS = &language{name: "javascript", lex: lexJS, keyword: jsKeywords, decl: declJS,
		grammar: func() *ts.Language { return ts.NewLanguage(tsjs.Language()) }}
	langTS = &language{name: "typescript", lex: lexJS, keyword: tsKeywords, decl: declJS,
		grammar: func() *ts.Language { return ts.NewLanguage(tsts.LanguageTypescript()) }}
	langTSX = &language{name: "tsx", lex: lexJS, keyword: tsKeywords, decl: declJS,
		grammar: func() *ts.Language { return ts.NewLanguage(tsts.LanguageTSX()) }}
	langRust = &language{name: "rust", lex: lexRust, keyword: rsKeywords, decl: declRust,
		grammar: func() *ts.Language { return ts.NewLanguage(tsrs.Language()) }}
)

// languages is every language the map parses, in a fixed order: a Map
// keeps one parser per entry.
var languages = []*language{langGo, langPython, langJS, langTS, langTSX, langRust}

// byExt maps a file name extension to its language.
var byExt = map[string]*language{
	".go":  langGo,
	".py":  langPython,
	".pyi": langPython,
	".js":  langJS,
	".mjs": langJS,
	".cjs": langJS,
	".jsx": langJS,
	".ts":  langTS,
	".mts": langTS,
	".cts": langTS,
	".tsx": langTSX,
	".rs":  langRust,
}

// languageFor is the language of a path by its extension; nil for a file
// the map lists by name only.
func languageFor(p string) *language {
	return byExt[strings.ToLower(path.Ext(p))]
}
