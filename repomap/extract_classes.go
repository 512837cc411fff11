package repomap

import (
	"strings"

	ts "github.com/tree-sitter/go-tree-sitter"
)

// joinNames is how a symbol that defines several names at once (int A, B)
// names them: comma-separated, as sym.defines reads them.
func joinNames(names []string) string { return strings.Join(names, ", ") }

// bodyHead is n's signature from start (after its attributes) to its
// body, or to its end without one.
func (x *extractor) bodyHead(start, n *ts.Node) string {
	if b := x.child(n, x.l.fields.body); b != nil {
		return x.head(start, b.StartByte())
	}
	return x.head(start, n.EndByte())
}

// memberKind is a function's kind: a method inside a type, a function
// elsewhere (at the top level, in a namespace, or where error recovery
// left it).
func (x *extractor) memberKind(container int) Kind {
	if container >= 0 && x.syms[container].Kind != Module {
		return Method
	}
	return Func
}

// Java: classes, interfaces, enums, records and annotation types with
// their methods and constructors, nested types, and constants (static
// final fields, an interface's fields). Annotations before a declaration
// are left out of its signature and line.
func declJava(x *extractor, n *ts.Node) { x.javaDecl(n, -1, 0) }

var javaTypes = map[string]Kind{
	"class_declaration":           Class,
	"record_declaration":          Class,
	"interface_declaration":       Interface,
	"annotation_type_declaration": Interface,
	"enum_declaration":            Enum,
}

func (x *extractor) javaDecl(d *ts.Node, container, depth int) {
	f := &x.l.fields
	if depth > maxDepth {
		return
	}
	kind := x.kind(d)
	switch kind {
	case "class_declaration", "record_declaration", "interface_declaration", "annotation_type_declaration", "enum_declaration":
		name := x.child(d, f.name)
		if name == nil {
			return
		}
		s := x.sigStart(d)
		i := x.add(s, javaTypes[kind], x.text(name), container, x.bodyHead(s, d))
		if b := x.child(d, f.body); b != nil {
			x.javaBody(b, i, depth+1)
		}
	case "method_declaration", "constructor_declaration", "compact_constructor_declaration", "annotation_type_element_declaration":
		if name := x.child(d, f.name); name != nil {
			s := x.sigStart(d)
			x.add(s, x.memberKind(container), x.text(name), container, x.bodyHead(s, d))
		}
	case "field_declaration", "constant_declaration":
		if kind == "field_declaration" && !x.javaStaticFinal(d) {
			return
		}
		var names []string
		for _, v := range x.fieldNodes(d, f.declarator) {
			if name := x.child(v, f.name); name != nil {
				names = append(names, x.text(name))
			}
		}
		if len(names) > 0 {
			s := x.sigStart(d)
			x.add(s, Const, joinNames(names), container, x.firstLineTo(s, d.EndByte()))
		}
	case "ERROR":
		x.javaBody(d, container, depth+1)
	}
}

// javaBody records the members of a class, interface, enum or annotation
// body; an enum's are after its constants.
func (x *extractor) javaBody(b *ts.Node, container, depth int) {
	for _, c := range x.named(b) {
		if x.kind(&c) == "enum_body_declarations" {
			x.javaBody(&c, container, depth)
			continue
		}
		x.javaDecl(&c, container, depth)
	}
}

// javaStaticFinal reports whether a field is declared static final.
func (x *extractor) javaStaticFinal(d *ts.Node) bool {
	for _, c := range x.named(d) {
		if x.kind(&c) == "modifiers" {
			return x.childKinds(&c, "static") && x.childKinds(&c, "final")
		}
	}
	return false
}

// C#: namespaces (block or file-scoped) with their members, classes,
// structs, interfaces, enums, records and delegates, methods,
// constructors and destructors, nested types, and const fields.
// Attributes ([Serializable]) are left out of signatures and lines.
func declCSharp(x *extractor, n *ts.Node) { x.csDecl(n, -1, 0) }

var csTypes = map[string]Kind{
	"class_declaration":         Class,
	"record_declaration":        Class,
	"record_struct_declaration": Struct,
	"struct_declaration":        Struct,
	"interface_declaration":     Interface,
	"enum_declaration":          Enum,
}

func (x *extractor) csDecl(d *ts.Node, container, depth int) {
	f := &x.l.fields
	if depth > maxDepth {
		return
	}
	kind := x.kind(d)
	switch kind {
	case "namespace_declaration", "file_scoped_namespace_declaration":
		name := x.child(d, f.name)
		if name == nil {
			return
		}
		b := x.child(d, f.body)
		sig := x.firstLine(d)
		if b != nil {
			sig = x.head(d, b.StartByte())
		}
		i := x.add(d, Module, x.text(name), container, sig)
		if b != nil {
			x.csBody(b, i, depth+1)
		}
		// A file-scoped namespace's members follow it as its siblings.
	case "class_declaration", "record_declaration", "record_struct_declaration", "struct_declaration", "interface_declaration", "enum_declaration":
		name := x.child(d, f.name)
		if name == nil {
			return
		}
		s := x.sigStart(d)
		i := x.add(s, csTypes[kind], x.text(name), container, x.bodyHead(s, d))
		if b := x.child(d, f.body); b != nil && kind != "enum_declaration" {
			x.csBody(b, i, depth+1)
		}
	case "delegate_declaration":
		if name := x.child(d, f.name); name != nil {
			s := x.sigStart(d)
			x.add(s, Type, x.text(name), container, x.head(s, d.EndByte()))
		}
	case "method_declaration", "constructor_declaration", "destructor_declaration":
		if name := x.child(d, f.name); name != nil && container >= 0 {
			s := x.sigStart(d)
			n := x.text(name)
			if kind == "destructor_declaration" {
				n = "~" + n
			}
			x.add(s, Method, n, container, x.bodyHead(s, d))
		}
	case "field_declaration":
		if !x.childKinds(d, "const") {
			return
		}
		var names []string
		for _, c := range x.named(d) {
			if x.kind(&c) != "variable_declaration" {
				continue
			}
			for _, v := range x.named(&c) {
				if x.kind(&v) == "variable_declarator" {
					if name := x.child(&v, f.name); name != nil {
						names = append(names, x.text(name))
					} else if id := x.firstNamed(&v); id != nil {
						names = append(names, x.text(id))
					}
				}
			}
		}
		if len(names) > 0 {
			s := x.sigStart(d)
			x.add(s, Const, joinNames(names), container, x.firstLineTo(s, d.EndByte()))
		}
	case "ERROR":
		x.csBody(d, container, depth+1)
	}
}

func (x *extractor) csBody(b *ts.Node, container, depth int) {
	for _, c := range x.named(b) {
		x.csDecl(&c, container, depth)
	}
}

// PHP: namespaces, classes, interfaces, traits and enums with their
// methods and constants, functions, and constants. Attributes (#[…]) are
// left out of signatures and lines; the HTML around the code is not read.
func declPHP(x *extractor, n *ts.Node) { x.phpDecl(n, -1, 0) }

var phpTypes = map[string]Kind{
	"class_declaration":     Class,
	"interface_declaration": Interface,
	"trait_declaration":     Trait,
	"enum_declaration":      Enum,
}

func (x *extractor) phpDecl(d *ts.Node, container, depth int) {
	f := &x.l.fields
	if depth > maxDepth {
		return
	}
	kind := x.kind(d)
	switch kind {
	case "namespace_definition":
		name := x.child(d, f.name)
		if name == nil {
			return
		}
		b := x.child(d, f.body)
		if b == nil {
			// namespace A\B; its members follow as its siblings.
			x.add(d, Module, x.text(name), container, x.firstLine(d))
			return
		}
		i := x.add(d, Module, x.text(name), container, x.head(d, b.StartByte()))
		x.phpBody(b, i, depth+1)
	case "class_declaration", "interface_declaration", "trait_declaration", "enum_declaration":
		name := x.child(d, f.name)
		if name == nil {
			return
		}
		s := x.sigStart(d)
		i := x.add(s, phpTypes[kind], x.text(name), container, x.bodyHead(s, d))
		if b := x.child(d, f.body); b != nil {
			x.phpBody(b, i, depth+1)
		}
	case "function_definition", "method_declaration":
		if name := x.child(d, f.name); name != nil {
			s := x.sigStart(d)
			x.add(s, x.memberKind(container), x.text(name), container, x.bodyHead(s, d))
		}
	case "const_declaration":
		var names []string
		for _, c := range x.named(d) {
			if x.kind(&c) == "const_element" {
				if n := x.firstNamed(&c); n != nil && x.kind(n) == "name" {
					names = append(names, x.text(n))
				}
			}
		}
		if len(names) > 0 {
			s := x.sigStart(d)
			x.add(s, Const, joinNames(names), container, x.firstLineTo(s, d.EndByte()))
		}
	case "ERROR":
		x.phpBody(d, container, depth+1)
	}
}

func (x *extractor) phpBody(b *ts.Node, container, depth int) {
	for _, c := range x.named(b) {
		x.phpDecl(&c, container, depth)
	}
}
