package repomap

import (
	"strings"
	"unicode"
	"unicode/utf8"

	ts "github.com/tree-sitter/go-tree-sitter"
)

// maxSignature is the longest signature kept, in bytes; a longer one is
// cut with "…".
const maxSignature = 160

// maxDepth bounds how deep definitions are looked for (classes in
// modules in error nodes…), so a pathological tree cannot recurse far.
const maxDepth = 8

// An extractor collects one file's definitions from its syntax tree. Only
// the nodes that can hold definitions are visited: the top level, and the
// bodies of classes, impls, traits, modules and namespaces. Error nodes
// are searched too, so a file with syntax errors keeps the definitions
// the parser recognised around them.
type extractor struct {
	l    *language
	src  []byte
	cur  *ts.TreeCursor
	syms []sym
}

func (x *extractor) kind(n *ts.Node) string { return x.l.kind(n.KindId()) }

// child is n's child in field f, or nil.
func (x *extractor) child(n *ts.Node, f uint16) *ts.Node {
	if f == 0 {
		return nil
	}
	return n.ChildByFieldId(f)
}

func (x *extractor) named(n *ts.Node) []ts.Node { return n.NamedChildren(x.cur) }

func (x *extractor) text(n *ts.Node) string {
	if n == nil {
		return ""
	}
	return clean(string(x.src[n.StartByte():n.EndByte()]))
}

// head is the text of n up to end (typically its body's start) on one
// line: whitespace runs collapsed, a trailing ';' dropped, cut to
// maxSignature.
func (x *extractor) head(n *ts.Node, end uint) string {
	s := collapse(stripComments(x.l.lex, x.src[n.StartByte():max(end, n.StartByte())]))
	s = strings.TrimSpace(strings.TrimRight(s, ";, "))
	return shortenSignature(clean(s))
}

// headBody is head up to n's body field, or all of n without one.
func (x *extractor) headBody(n *ts.Node) string {
	if b := x.child(n, x.l.fields.body); b != nil {
		return x.head(n, b.StartByte())
	}
	return x.head(n, n.EndByte())
}

// firstLine is n's first line, with " …" when n goes on.
func (x *extractor) firstLine(n *ts.Node) string { return x.firstLineTo(n, n.EndByte()) }

// firstLineTo is the first line of the text from n's start to end, with
// " …" when it goes on.
func (x *extractor) firstLineTo(n *ts.Node, end uint) string {
	t := x.src[n.StartByte():max(end, n.StartByte())]
	more := false
	if i := strings.IndexByte(string(t), '\n'); i >= 0 {
		t, more = t[:i], true
	}
	s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(t)), ";"))
	if more {
		s += " …"
	}
	return shortenSignature(clean(collapse([]byte(s))))
}

// sigStart is the node a signature starts at: n, or after the attributes
// and annotations that open it (C#'s [Obsolete], Java's @Override in its
// modifiers, PHP's #[Entity]), so the line is the declaration's own.
func (x *extractor) sigStart(n *ts.Node) *ts.Node {
	if s, ok := x.afterAttributes(n, 0); ok {
		return s
	}
	return n
}

// afterAttributes is the first child of n that is not an attribute or a
// comment, looking into Java's modifiers; false when there is none.
func (x *extractor) afterAttributes(n *ts.Node, depth int) (*ts.Node, bool) {
	for i := range n.ChildCount() {
		c := n.Child(i)
		switch x.kind(c) {
		case "attribute_list", "annotation", "marker_annotation", "comment", "line_comment", "block_comment":
			continue
		case "modifiers":
			if depth == 0 {
				if s, ok := x.afterAttributes(c, depth+1); ok {
					return s, true
				}
				continue
			}
		}
		return c, true
	}
	return nil, false
}

// childKinds reports whether one of n's children (named or not) is of
// one of kinds, or is just that word: a modifier, typically.
func (x *extractor) childKinds(n *ts.Node, kinds ...string) bool {
	if n == nil {
		return false
	}
	for i := range n.ChildCount() {
		c := n.Child(i)
		for _, k := range kinds {
			if x.kind(c) == k || c.EndByte()-c.StartByte() == uint(len(k)) && x.text(c) == k {
				return true
			}
		}
	}
	return false
}

// fieldNodes is every named child of n in field f: a declaration's
// several declarators.
func (x *extractor) fieldNodes(n *ts.Node, f uint16) []*ts.Node {
	var out []*ts.Node
	if f == 0 {
		return nil
	}
	x.cur.Reset(*n)
	for ok := x.cur.GotoFirstChild(); ok; ok = x.cur.GotoNextSibling() {
		if x.cur.FieldId() == f && x.cur.Node().IsNamed() {
			out = append(out, x.cur.Node())
		}
	}
	return out
}

// add records a definition and returns its index.
func (x *extractor) add(n *ts.Node, k Kind, name string, container int, sig string) int {
	parent, depth := "", 0
	if container >= 0 {
		parent, depth = x.syms[container].Name, x.syms[container].depth+1
	}
	line, end := int(n.StartPosition().Row)+1, int(n.EndPosition().Row)+1
	if e := n.EndPosition(); e.Column == 0 && end > line {
		end-- // a node that takes its last newline ends on the line before
	}
	x.syms = append(x.syms, sym{
		Symbol: Symbol{
			Kind: k, Name: name, Parent: parent, Container: container,
			Line: line, End: end, Signature: sig,
		},
		depth: depth,
	})
	return len(x.syms) - 1
}

// A chunk is the definitions in one top-level node. A reparse extracts
// again only the nodes an edit reached; the others keep their chunk,
// shifted.
type chunk struct {
	start, end uint  // the node's bytes
	syms       []sym // Container indexes count from the chunk's first symbol
}

// extract returns the definitions of every top-level node of root.
func (x *extractor) extract(root *ts.Node) []chunk {
	var chunks []chunk
	for _, n := range x.named(root) {
		chunks = x.take(&n, chunks)
	}
	return chunks
}

// take appends n's chunk to chunks, if it defines anything.
func (x *extractor) take(n *ts.Node, chunks []chunk) []chunk {
	x.syms = nil
	x.l.decl(x, n)
	if len(x.syms) == 0 {
		return chunks
	}
	return append(chunks, chunk{start: n.StartByte(), end: n.EndByte(), syms: x.syms})
}

// reextract returns the definitions of root, a reparse after edit: the
// chunks of old that neither the edit nor the ranges whose structure
// changed reach are kept (those after the edit shifted by its bytes and
// lines); the top-level nodes in between are extracted again. A node the
// region only touches counts as reached.
func (x *extractor) reextract(root *ts.Node, old []chunk, e ts.InputEdit, changed []ts.Range) []chunk {
	delta := int(e.NewEndByte) - int(e.OldEndByte)
	lines := int(e.NewEndPosition.Row) - int(e.OldEndPosition.Row)
	// The region to extract again, in the new text's bytes, inclusive.
	lo, hi := e.StartByte, e.NewEndByte
	for _, r := range changed {
		lo, hi = min(lo, r.StartByte), max(hi, r.EndByte)
	}
	// Each old chunk's bytes in the new text; one the edit reaches joins
	// the region.
	type placed struct{ start, end uint }
	at := make([]placed, len(old))
	for i, c := range old {
		switch {
		case c.end < e.StartByte:
			at[i] = placed{c.start, c.end}
		case c.start > e.OldEndByte:
			at[i] = placed{uint(int(c.start) + delta), uint(int(c.end) + delta)}
		default:
			end := e.NewEndByte
			if c.end >= e.OldEndByte {
				end = uint(int(c.end) + delta)
			}
			at[i] = placed{min(c.start, e.StartByte), end}
			lo, hi = min(lo, at[i].start), max(hi, end)
		}
	}
	// Chunks clear of the region stay; the top-level nodes that reach
	// into it are extracted again (the old chunks of unchanged ones among
	// them too).
	var before, after []chunk
	for i, c := range old {
		p := at[i]
		switch {
		case p.end < lo:
			before = append(before, c)
		case p.start > hi:
			syms := make([]sym, len(c.syms))
			for j, s := range c.syms {
				s.Line += lines
				s.End += lines
				syms[j] = s
			}
			after = append(after, chunk{start: p.start, end: p.end, syms: syms})
		}
	}
	from := lo
	if from > 0 {
		from-- // so that a node ending at lo is found
	}
	chunks := before
	for n := root.FirstNamedChildForByte(from); n != nil && n.StartByte() <= hi; n = n.NextNamedSibling() {
		if n.EndByte() >= lo {
			chunks = x.take(n, chunks)
		}
	}
	return append(chunks, after...)
}

// flatten lays chunks end to end, Container indexes made file-wide.
func flatten(chunks []chunk) []sym {
	n := 0
	for _, c := range chunks {
		n += len(c.syms)
	}
	syms := make([]sym, 0, n)
	for _, c := range chunks {
		base := len(syms)
		for _, s := range c.syms {
			if s.Container >= 0 {
				s.Container += base
			}
			syms = append(syms, s)
		}
	}
	return syms
}

// collapse writes code on one line: every run of white space becomes one
// space, none is kept just inside brackets, and a trailing comma before a
// closing bracket goes ("f(\n\ta int,\n)" is "f(a int)").
func collapse(b []byte) string {
	out := make([]byte, 0, len(b))
	space := false
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			space = true
			continue
		case ')', ']':
			if k := len(out); k > 0 && out[k-1] == ',' {
				out = out[:k-1]
			}
		default:
			if k := len(out); space && k > 0 && out[k-1] != '(' && out[k-1] != '[' {
				out = append(out, ' ')
			}
		}
		space = false
		out = append(out, c)
	}
	return string(out)
}

// shortenSignature cuts a signature longer than maxSignature bytes to at
// most maxSignature bytes ending in "…", cut on a rune boundary with the
// spaces before the "…" dropped; a shorter one comes back as it is.
func shortenSignature(s string) string {
	if len(s) <= maxSignature {
		return s
	}
	n := maxSignature - len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimRight(s[:n], " ") + "…"
}

// Go: functions, methods (Parent: the receiver's type), types, constants
// and variables at the top level.
func declGo(x *extractor, n *ts.Node) { x.goDecl(n, 0) }

func (x *extractor) goDecl(c *ts.Node, depth int) {
	f := &x.l.fields
	switch x.kind(c) {
	case "function_declaration":
		if name := x.child(c, f.name); name != nil {
			x.add(c, Func, x.text(name), -1, x.headBody(c))
		}
	case "method_declaration":
		name := x.child(c, f.name)
		if name == nil {
			return
		}
		i := x.add(c, Method, x.text(name), -1, x.headBody(c))
		x.syms[i].Parent = x.goReceiver(c)
	case "type_declaration":
		for _, spec := range x.named(c) {
			x.goType(&spec)
		}
	case "const_declaration", "var_declaration":
		k, kw := Const, "const "
		if x.kind(c) == "var_declaration" {
			k, kw = Var, "var "
		}
		for _, spec := range x.named(c) {
			if x.kind(&spec) == "var_spec_list" {
				for _, s := range x.named(&spec) {
					x.goValue(&s, k, kw)
				}
				continue
			}
			x.goValue(&spec, k, kw)
		}
	case "ERROR":
		if depth < maxDepth {
			for _, e := range x.named(c) {
				x.goDecl(&e, depth+1)
			}
		}
	}
}

// goReceiver is the type name of a method's receiver: "Map" for
// (m *Map[K, V]).
func (x *extractor) goReceiver(n *ts.Node) string {
	r := x.child(n, x.l.fields.receiver)
	if r == nil {
		return ""
	}
	t := strings.Trim(x.text(r), "() \t\n")
	if i := strings.IndexByte(t, '['); i >= 0 {
		t = t[:i]
	}
	if i := strings.LastIndexAny(t, " \t\n*"); i >= 0 {
		t = t[i+1:]
	}
	return t
}

// goType records one type_spec or type_alias: "type Map[K comparable] struct".
func (x *extractor) goType(spec *ts.Node) {
	f := &x.l.fields
	name := x.child(spec, f.name)
	if name == nil {
		return
	}
	k, end := Type, spec.EndByte()
	if t := x.child(spec, f.typ); t != nil && x.kind(spec) == "type_spec" {
		switch x.kind(t) {
		case "struct_type":
			k, end = Struct, t.StartByte()+uint(len("struct"))
		case "interface_type":
			k, end = Interface, t.StartByte()+uint(len("interface"))
		}
	}
	sig := "type " + x.head(spec, end)
	if k == Type {
		sig = "type " + x.firstLine(spec)
	}
	x.add(spec, k, x.text(name), -1, shortenSignature(sig))
}

// goValue records a const_spec or var_spec with all its names.
func (x *extractor) goValue(spec *ts.Node, k Kind, kw string) {
	var names []string
	x.cur.Reset(*spec)
	for ok := x.cur.GotoFirstChild(); ok; ok = x.cur.GotoNextSibling() {
		if x.cur.FieldId() == x.l.fields.name && x.cur.Node().IsNamed() {
			names = append(names, x.text(x.cur.Node()))
		}
	}
	if len(names) == 0 {
		return
	}
	x.add(spec, k, strings.Join(names, ", "), -1, shortenSignature(kw+x.firstLine(spec)))
}

// Python: classes with their methods and nested classes, functions, and
// module constants (names in capitals).
func declPython(x *extractor, n *ts.Node) { x.pyDecl(n, -1, 0) }

func (x *extractor) pyBlock(n *ts.Node, container, depth int) {
	for _, c := range x.named(n) {
		x.pyDecl(&c, container, depth)
	}
}

func (x *extractor) pyDecl(c *ts.Node, container, depth int) {
	f := &x.l.fields
	d := c
	if x.kind(d) == "decorated_definition" {
		if d = x.child(d, f.definition); d == nil {
			return
		}
	}
	switch x.kind(d) {
	case "function_definition":
		name := x.child(d, f.name)
		if name == nil {
			return
		}
		k := Func
		if container >= 0 && x.syms[container].Kind == Class {
			k = Method
		}
		x.add(d, k, x.text(name), container, x.pyHead(d))
	case "class_definition":
		name := x.child(d, f.name)
		if name == nil {
			return
		}
		i := x.add(d, Class, x.text(name), container, x.pyHead(d))
		if b := x.child(d, f.body); b != nil && depth < maxDepth {
			x.pyBlock(b, i, depth+1)
		}
	case "type_alias_statement":
		if name := x.firstNamed(d); name != nil {
			x.add(d, Type, x.text(name), container, x.firstLine(d))
		}
	case "expression_statement":
		if container >= 0 {
			return
		}
		a := x.firstNamed(d)
		if a == nil || x.kind(a) != "assignment" {
			return
		}
		left := x.child(a, f.left)
		if left == nil || x.kind(left) != "identifier" || !isConstName(x.text(left)) {
			return
		}
		x.add(d, Const, x.text(left), container, x.firstLine(d))
	case "ERROR":
		if depth < maxDepth {
			x.pyBlock(d, container, depth+1)
		}
	}
}

// pyHead is a def or class head without its colon.
func (x *extractor) pyHead(n *ts.Node) string {
	return strings.TrimSpace(strings.TrimSuffix(x.headBody(n), ":"))
}

func (x *extractor) firstNamed(n *ts.Node) *ts.Node {
	if n.NamedChildCount() == 0 {
		return nil
	}
	return n.NamedChild(0)
}

// isConstName reports whether s is written like a constant: capitals,
// digits and underscores, with a letter.
func isConstName(s string) bool {
	letter := false
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			letter = true
		case r == '_' || unicode.IsDigit(r):
		default:
			return false
		}
	}
	return letter
}

// JavaScript, TypeScript and TSX: functions, classes with their methods,
// interfaces, type aliases, enums, namespaces with their members, and
// top-level const bindings (functions when they hold one).
func declJS(x *extractor, n *ts.Node) { x.jsDecl(n, -1, 0) }

func (x *extractor) jsBlock(n *ts.Node, container, depth int) {
	for _, c := range x.named(n) {
		x.jsDecl(&c, container, depth)
	}
}

func (x *extractor) jsDecl(d *ts.Node, container, depth int) {
	f := &x.l.fields
	if depth > maxDepth {
		return
	}
	switch x.kind(d) {
	case "export_statement":
		if decl := x.child(d, f.declaration); decl != nil {
			x.jsDecl(decl, container, depth)
		}
	case "ambient_declaration", "expression_statement":
		// declare function f(): void; namespace N {} (a statement).
		for _, c := range x.named(d) {
			x.jsDecl(&c, container, depth+1)
		}
	case "function_declaration", "generator_function_declaration", "function_signature":
		if name := x.child(d, f.name); name != nil {
			x.add(d, Func, x.text(name), container, x.headBody(d))
		}
	case "class_declaration", "abstract_class_declaration", "class":
		name := x.child(d, f.name)
		if name == nil {
			return
		}
		i := x.add(d, Class, x.text(name), container, x.headBody(d))
		if b := x.child(d, f.body); b != nil {
			x.jsClassBody(b, i)
		}
	case "interface_declaration":
		if name := x.child(d, f.name); name != nil {
			x.add(d, Interface, x.text(name), container, x.headBody(d))
		}
	case "type_alias_declaration":
		if name := x.child(d, f.name); name != nil {
			x.add(d, Type, x.text(name), container, x.firstLine(d))
		}
	case "enum_declaration":
		if name := x.child(d, f.name); name != nil {
			x.add(d, Enum, x.text(name), container, x.headBody(d))
		}
	case "internal_module", "module":
		name := x.child(d, f.name)
		if name == nil {
			return
		}
		i := x.add(d, Module, x.text(name), container, x.headBody(d))
		if b := x.child(d, f.body); b != nil {
			x.jsBlock(b, i, depth+1)
		}
	case "lexical_declaration", "variable_declaration":
		x.jsBindings(d, container)
	case "ERROR":
		x.jsBlock(d, container, depth+1)
	}
}

// jsClassBody records a class's methods.
func (x *extractor) jsClassBody(body *ts.Node, class int) {
	for _, m := range x.named(body) {
		switch x.kind(&m) {
		case "method_definition", "method_signature", "abstract_method_signature":
			if name := x.child(&m, x.l.fields.name); name != nil {
				x.add(&m, Method, x.text(name), class, x.headBody(&m))
			}
		}
	}
}

// jsBindings records the functions and classes bound by a const, let or
// var declaration, and its other const bindings except require calls.
func (x *extractor) jsBindings(d *ts.Node, container int) {
	f := &x.l.fields
	kw := ""
	if d.ChildCount() > 0 {
		kw = x.text(d.Child(0))
	}
	for _, v := range x.named(d) {
		if x.kind(&v) != "variable_declarator" {
			continue
		}
		name := x.child(&v, f.name)
		if name == nil || x.kind(name) != "identifier" {
			continue // a destructuring pattern
		}
		val := x.child(&v, f.value)
		k := Const
		if val != nil {
			switch x.kind(val) {
			case "arrow_function", "function_expression", "function", "generator_function":
				k = Func
			case "class":
				k = Class
			case "call_expression":
				if fn := x.child(val, f.function); fn != nil && x.text(fn) == "require" {
					continue
				}
			case "await_expression":
				continue // an import
			}
		}
		if k == Const && kw != "const" {
			continue
		}
		sig := kw + " " + x.firstLine(&v)
		if k == Func {
			end := val.EndByte()
			if b := x.child(val, f.body); b != nil {
				end = b.StartByte()
			}
			sig = kw + " " + x.head(&v, end)
		} else if k == Class {
			end := val.EndByte()
			if b := x.child(val, f.body); b != nil {
				end = b.StartByte()
			}
			sig = kw + " " + x.head(&v, end)
		}
		x.add(&v, k, x.text(name), container, shortenSignature(sig))
	}
}

// Rust: functions, structs, enums, unions, traits and their methods, impl
// blocks and their methods, type aliases, constants, statics, modules
// with their items, and macro_rules.
func declRust(x *extractor, n *ts.Node) { x.rsItem(n, -1, 0) }

func (x *extractor) rsItems(n *ts.Node, container, depth int) {
	for _, c := range x.named(n) {
		x.rsItem(&c, container, depth)
	}
}

func (x *extractor) rsItem(c *ts.Node, container, depth int) {
	f := &x.l.fields
	if depth > maxDepth {
		return
	}
	inType := container >= 0 && (x.syms[container].Kind == Impl || x.syms[container].Kind == Trait)
	name := x.child(c, f.name)
	switch x.kind(c) {
	case "function_item", "function_signature_item":
		if name != nil {
			k := Func
			if inType {
				k = Method
			}
			x.add(c, k, x.text(name), container, x.headBody(c))
		}
	case "struct_item", "union_item":
		if name != nil {
			sig := x.firstLine(c)
			if b := x.child(c, f.body); b != nil && x.kind(b) == "field_declaration_list" {
				sig = x.head(c, b.StartByte())
			}
			x.add(c, Struct, x.text(name), container, sig)
		}
	case "enum_item":
		if name != nil {
			x.add(c, Enum, x.text(name), container, x.headBody(c))
		}
	case "trait_item":
		if name != nil {
			i := x.add(c, Trait, x.text(name), container, x.headBody(c))
			if b := x.child(c, f.body); b != nil {
				x.rsItems(b, i, depth+1)
			}
		}
	case "impl_item":
		t := x.text(x.child(c, f.typ))
		if i := strings.IndexByte(t, '<'); i >= 0 {
			t = t[:i]
		}
		i := x.add(c, Impl, strings.TrimLeft(t, "&"), container, x.headBody(c))
		if b := x.child(c, f.body); b != nil {
			x.rsItems(b, i, depth+1)
		}
	case "mod_item":
		if name != nil {
			i := x.add(c, Module, x.text(name), container, x.headBody(c))
			if b := x.child(c, f.body); b != nil {
				x.rsItems(b, i, depth+1)
			}
		}
	case "type_item", "associated_type":
		if name != nil {
			x.add(c, Type, x.text(name), container, x.firstLine(c))
		}
	case "const_item":
		if name != nil {
			x.add(c, Const, x.text(name), container, x.firstLine(c))
		}
	case "static_item":
		if name != nil {
			x.add(c, Var, x.text(name), container, x.firstLine(c))
		}
	case "macro_definition":
		if name != nil {
			x.add(c, Macro, x.text(name), container, "macro_rules! "+x.text(name))
		}
	case "ERROR":
		x.rsItems(c, container, depth+1)
	}
}
