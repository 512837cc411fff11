package repomap

import (
	"strings"

	ts "github.com/tree-sitter/go-tree-sitter"
)

// C and C++: functions (defined or declared), structs, unions, classes and
// enums with a body, typedefs, using aliases, namespaces with their
// members, the methods of a class (defined in it, declared in it, or
// defined outside it as Class::method), file-level variables and
// constants, and #define'd macros (an include guard, which defines no
// value, left out). What #if, #ifdef and their #else hold is looked into,
// each branch's definitions kept; extern "C" blocks and templates too, a
// template's head starting its signature.
func declC(x *extractor, n *ts.Node) { x.cDecl(n, n, -1, 0) }

// cDecl records what d defines. outer is the node its signature and line
// start at: d, or the template_declaration around it.
func (x *extractor) cDecl(d, outer *ts.Node, container, depth int) {
	f := &x.l.fields
	if depth > maxDepth {
		return
	}
	switch x.kind(d) {
	case "function_definition":
		name, scope, _ := x.cName(x.child(d, f.declarator))
		if name == "" {
			return
		}
		end := d.EndByte()
		if b := x.child(d, f.body); b != nil {
			end = b.StartByte()
		}
		i := x.add(outer, x.cFuncKind(container, scope), name, container, x.head(outer, end))
		if scope != "" {
			x.syms[i].Parent = scope
		}
	case "declaration", "field_declaration":
		x.cDeclaration(d, outer, container, depth)
	case "struct_specifier", "union_specifier", "class_specifier":
		name, body := x.child(d, f.name), x.child(d, f.body)
		if name == nil || body == nil {
			return // a use, a forward declaration, or anonymous
		}
		k := Struct
		if x.kind(d) == "class_specifier" {
			k = Class
		}
		n, _, _ := x.cName(name)
		i := x.add(outer, k, n, container, x.head(outer, body.StartByte()))
		for _, c := range x.named(body) {
			x.cDecl(&c, &c, i, depth+1)
		}
	case "enum_specifier":
		name, body := x.child(d, f.name), x.child(d, f.body)
		if name != nil && body != nil {
			x.add(outer, Enum, x.text(name), container, x.head(outer, body.StartByte()))
		}
	case "type_definition":
		x.cTypedef(d, outer, container)
	case "alias_declaration":
		if name := x.child(d, f.name); name != nil {
			x.add(outer, Type, x.text(name), container, x.head(outer, d.EndByte()))
		}
	case "namespace_definition":
		body := x.child(d, f.body)
		if body == nil {
			return
		}
		i := container
		if name := x.child(d, f.name); name != nil { // else anonymous: its members are the file's
			i = x.add(outer, Module, x.text(name), container, x.head(outer, body.StartByte()))
		}
		for _, c := range x.named(body) {
			x.cDecl(&c, &c, i, depth+1)
		}
	case "linkage_specification":
		body := x.child(d, f.body)
		if body == nil {
			return
		}
		if x.kind(body) != "declaration_list" {
			x.cDecl(body, outer, container, depth+1) // extern "C" int f(void);
			return
		}
		for _, c := range x.named(body) {
			x.cDecl(&c, &c, container, depth+1)
		}
	case "template_declaration":
		for _, c := range x.named(d) {
			if x.kind(&c) != "template_parameter_list" {
				x.cDecl(&c, outer, container, depth+1)
			}
		}
	case "preproc_def":
		name, v := x.child(d, f.name), x.child(d, f.value)
		if name != nil && v != nil {
			x.add(d, Const, x.text(name), container, x.firstLineTo(d, v.EndByte()))
		}
	case "preproc_function_def":
		if name := x.child(d, f.name); name != nil {
			sig := x.firstLine(d)
			if v := x.child(d, f.value); v != nil {
				sig = x.head(d, v.StartByte())
			}
			x.add(d, Macro, x.text(name), container, sig)
		}
	case "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef", "ERROR":
		for _, c := range x.named(d) {
			x.cDecl(&c, &c, container, depth+1)
		}
	}
}

// cFuncKind is a function's kind: a method when it is in a class or
// struct, or defined outside one with a qualified name (A::f). A function
// of a namespace defined as ns::f is taken for a method of ns too: the
// file alone does not say which ns is.
func (x *extractor) cFuncKind(container int, scope string) Kind {
	if scope != "" || container >= 0 && (x.syms[container].Kind == Class || x.syms[container].Kind == Struct) {
		return Method
	}
	return Func
}

// cDeclaration records a declaration: the struct, class or enum its type
// defines (struct s {…} v;), then per declarator a function's prototype, or
// outside classes a variable (a constant when declared const or constexpr).
func (x *extractor) cDeclaration(d, outer *ts.Node, container, depth int) {
	f := &x.l.fields
	if t := x.child(d, f.typ); t != nil && x.child(t, f.body) != nil {
		x.cDecl(t, t, container, depth+1)
	}
	inClass := container >= 0 && (x.syms[container].Kind == Class || x.syms[container].Kind == Struct)
	var vars []string
	var table *ts.Node // the { … } of a variable's initializer
	for _, decl := range x.fieldNodes(d, f.declarator) {
		name, scope, fn := x.cName(decl)
		switch {
		case name == "":
		case fn:
			i := x.add(outer, x.cFuncKind(container, scope), name, container, x.head(outer, d.EndByte()))
			if scope != "" {
				x.syms[i].Parent = scope
			}
		case !inClass:
			vars = append(vars, name)
			if v := x.child(decl, f.value); v != nil && x.kind(v) == "initializer_list" && table == nil {
				table = v
			}
		}
	}
	if len(vars) == 0 {
		return
	}
	k := Var
	if x.childKinds(d, "const", "constexpr", "constinit") {
		k = Const
	}
	sig := x.firstLineTo(outer, d.EndByte())
	if table != nil && len(vars) == 1 {
		sig = x.head(outer, table.StartByte()) + " {…}" // int table[] = {…}
	}
	x.add(outer, k, strings.Join(vars, ", "), container, shortenSignature(sig))
}

// cTypedef records a typedef: of a struct, union or enum with a body as
// that kind ("typedef struct {…} list_t"), else as a type.
func (x *extractor) cTypedef(d, outer *ts.Node, container int) {
	f := &x.l.fields
	var names []string
	for _, decl := range x.fieldNodes(d, f.declarator) {
		if name, _, _ := x.cName(decl); name != "" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return
	}
	name := strings.Join(names, ", ")
	t := x.child(d, f.typ)
	var body *ts.Node
	if t != nil {
		body = x.child(t, f.body)
	}
	if body == nil {
		x.add(outer, Type, name, container, x.head(outer, d.EndByte()))
		return
	}
	k := Struct
	switch x.kind(t) {
	case "enum_specifier":
		k = Enum
	case "class_specifier":
		k = Class
	}
	x.add(outer, k, name, container, shortenSignature(x.head(outer, body.StartByte())+" {…} "+name))
}

// cName reads a declarator down to the name it declares: the name, the
// class or namespace it is qualified with ("Circle" for
// geo::Circle::area, without template arguments), and whether it declares
// a function (a function pointer is a variable).
func (x *extractor) cName(d *ts.Node) (name, scope string, fn bool) {
	f := &x.l.fields
	for range 2 * maxDepth {
		if d == nil {
			return "", "", false
		}
		switch x.kind(d) {
		case "function_declarator":
			inner := x.child(d, f.declarator)
			if inner != nil && x.kind(inner) != "parenthesized_declarator" {
				fn = true
			}
			d = inner
		case "pointer_declarator", "array_declarator", "init_declarator", "attributed_declarator":
			d = x.child(d, f.declarator)
		case "reference_declarator", "parenthesized_declarator":
			d = x.firstNamed(d)
		case "qualified_identifier":
			if s := x.child(d, f.scope); s != nil {
				scope = x.text(s)
				if i := strings.IndexByte(scope, '<'); i >= 0 {
					scope = scope[:i]
				}
			}
			d = x.child(d, f.name)
		case "template_function", "template_type":
			d = x.child(d, f.name)
		case "identifier", "field_identifier", "type_identifier", "destructor_name", "operator_name", "namespace_identifier":
			return x.text(d), scope, fn
		default:
			return "", "", false
		}
	}
	return "", "", false
}
