package repomap

import (
	"path"
	"strings"
	"sync"

	ts "github.com/tree-sitter/go-tree-sitter"
	tsbash "github.com/tree-sitter/tree-sitter-bash/bindings/go"
	tscs "github.com/tree-sitter/tree-sitter-c-sharp/bindings/go"
	tsc "github.com/tree-sitter/tree-sitter-c/bindings/go"
	tscpp "github.com/tree-sitter/tree-sitter-cpp/bindings/go"
	tsgo "github.com/tree-sitter/tree-sitter-go/bindings/go"
	tsjava "github.com/tree-sitter/tree-sitter-java/bindings/go"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tsphp "github.com/tree-sitter/tree-sitter-php/bindings/go"
	tspy "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsrb "github.com/tree-sitter/tree-sitter-ruby/bindings/go"
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
	declarator, parameters, superclass, scope                                 uint16
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
			declarator: f("declarator"), parameters: f("parameters"), superclass: f("superclass"),
			scope: f("scope"),
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
	javaKeywords = words(`abstract assert boolean break byte case catch char class const continue default
		do double else enum extends final finally float for goto if implements import instanceof int
		interface long native new package private protected public return short static strictfp super
		switch synchronized this throw throws transient try void volatile while true false null var`)
	cKeywords = words(`auto break case char const continue default do double else enum extern float for
		goto if inline int long register restrict return short signed sizeof static struct switch
		typedef union unsigned void volatile while NULL define include ifdef ifndef endif elif undef
		pragma defined`)
	cppKeywords = words(`auto break case char const continue default do double else enum extern float for
		goto if inline int long register return short signed sizeof static struct switch typedef union
		unsigned void volatile while NULL define include ifdef ifndef endif elif undef pragma defined
		alignas alignof bool catch class constexpr consteval constinit const_cast decltype delete
		dynamic_cast explicit false friend mutable namespace new noexcept nullptr operator override
		private protected public reinterpret_cast static_assert static_cast template this
		thread_local throw true try typeid typename using virtual co_await co_return co_yield`)
	csKeywords = words(`abstract as base bool break byte case catch char checked class const continue
		decimal default delegate do double else enum event explicit extern false finally fixed float
		for foreach goto if implicit in int interface internal is lock long namespace new null object
		operator out override params private protected public readonly ref return sbyte sealed short
		sizeof stackalloc static string struct switch this throw true try typeof uint ulong unchecked
		unsafe ushort using virtual void volatile while var`)
	rbKeywords = words(`BEGIN END alias and begin break case class def defined do else elsif end ensure
		false for if in module next nil not or redo rescue retry return self super then true undef
		unless until when while yield`)
	phpKeywords = words(`abstract and array as break callable case catch class clone const continue
		declare default do echo else elseif empty enddeclare endfor endforeach endif endswitch endwhile
		enum extends final finally fn for foreach function global goto if implements include
		include_once instanceof insteadof interface isset list match namespace new or print private
		protected public readonly require require_once return static switch throw trait try unset use
		var while xor yield true false null self parent php`)
	shKeywords = words(`if then else elif fi case esac for select while until do done in function time
		coproc local export readonly declare typeset unset return exit break continue shift true false`)
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
	langJava = &language{name: "java", lex: lexC, keyword: javaKeywords, decl: declJava,
		grammar: func() *ts.Language { return ts.NewLanguage(tsjava.Language()) }}
	langC = &language{name: "c", lex: lexC, keyword: cKeywords, decl: declC,
		grammar: func() *ts.Language { return ts.NewLanguage(tsc.Language()) }}
	langCpp = &language{name: "cpp", lex: lexC, keyword: cppKeywords, decl: declC,
		grammar: func() *ts.Language { return ts.NewLanguage(tscpp.Language()) }}
	langCSharp = &language{name: "csharp", lex: lexC, keyword: csKeywords, decl: declCSharp,
		grammar: func() *ts.Language { return ts.NewLanguage(tscs.Language()) }}
	langRuby = &language{name: "ruby", lex: lexRuby, keyword: rbKeywords, decl: declRuby,
		grammar: func() *ts.Language { return ts.NewLanguage(tsrb.Language()) }}
	langPHP = &language{name: "php", lex: lexPHP, keyword: phpKeywords, decl: declPHP,
		grammar: func() *ts.Language { return ts.NewLanguage(tsphp.LanguagePHP()) }}
	langBash = &language{name: "bash", lex: lexShell, keyword: shKeywords, decl: declBash,
		grammar: func() *ts.Language { return ts.NewLanguage(tsbash.Language()) }}
)

// languages is every language the map parses, in a fixed order: a Map
// keeps one parser per entry.
var languages = []*language{langGo, langPython, langJS, langTS, langTSX, langRust,
	langJava, langC, langCpp, langCSharp, langRuby, langPHP, langBash}

// byExt maps a file name extension to its language.
var byExt = map[string]*language{
	".go":   langGo,
	".py":   langPython,
	".pyi":  langPython,
	".js":   langJS,
	".mjs":  langJS,
	".cjs":  langJS,
	".jsx":  langJS,
	".ts":   langTS,
	".mts":  langTS,
	".cts":  langTS,
	".tsx":  langTSX,
	".rs":   langRust,
	".java": langJava,
	".c":    langC,
	// A header may be C or C++. C++'s grammar reads C headers about as
	// well as C's (of /usr/include's 7296, 3660 parse with errors against
	// C's 4903, and the extra symbols C's finds are misread macros), and
	// C's misses classes, namespaces and templates.
	".h":    langCpp,
	".cc":   langCpp,
	".cpp":  langCpp,
	".cxx":  langCpp,
	".c++":  langCpp,
	".hh":   langCpp,
	".hpp":  langCpp,
	".hxx":  langCpp,
	".h++":  langCpp,
	".ipp":  langCpp,
	".cs":   langCSharp,
	".rb":   langRuby,
	".rake": langRuby,
	".php":  langPHP,
	".sh":   langBash,
	".bash": langBash,
}

// languageFor is the language of a path by its extension; nil for a file
// the map lists by name only.
func languageFor(p string) *language {
	return byExt[strings.ToLower(path.Ext(p))]
}
