package repomap

import (
	ts "github.com/tree-sitter/go-tree-sitter"
)

// Ruby: modules and classes (class A::B nested under A) with their
// methods, singleton methods (def self.f, and those in class << self),
// and constants. A signature ends with the parameters: a method's body
// may follow on the same line (def f = x).
func declRuby(x *extractor, n *ts.Node) { x.rbDecl(n, -1, 0) }

func (x *extractor) rbDecl(d *ts.Node, container, depth int) {
	f := &x.l.fields
	if depth > maxDepth {
		return
	}
	switch x.kind(d) {
	case "class", "module":
		name := x.child(d, f.name)
		if name == nil {
			return
		}
		parent := ""
		if x.kind(name) == "scope_resolution" {
			if s := x.child(name, f.scope); s != nil {
				parent = x.text(s)
			}
			if name = x.child(name, f.name); name == nil {
				return
			}
		}
		k, end := Class, name.EndByte()
		if x.kind(d) == "module" {
			k = Module
		}
		if s := x.child(d, f.superclass); s != nil {
			end = s.EndByte()
		}
		i := x.add(d, k, x.text(name), container, x.head(d, end))
		if parent != "" {
			x.syms[i].Parent = parent
		}
		if b := x.child(d, f.body); b != nil {
			x.rbBody(b, i, depth+1)
		}
	case "method", "singleton_method":
		name := x.child(d, f.name)
		if name == nil {
			return
		}
		end := name.EndByte()
		if p := x.child(d, f.parameters); p != nil {
			end = p.EndByte()
		}
		k := Func
		if container >= 0 || x.kind(d) == "singleton_method" {
			k = Method
		}
		x.add(d, k, x.text(name), container, x.head(d, end))
	case "singleton_class":
		if b := x.child(d, f.body); b != nil {
			x.rbBody(b, container, depth+1)
		}
	case "assignment":
		if left := x.child(d, f.left); left != nil && x.kind(left) == "constant" {
			x.add(d, Const, x.text(left), container, x.firstLine(d))
		}
	case "ERROR", "body_statement":
		x.rbBody(d, container, depth+1)
	}
}

func (x *extractor) rbBody(b *ts.Node, container, depth int) {
	for _, c := range x.named(b) {
		x.rbDecl(&c, container, depth)
	}
}

// Shell: functions, and the top level's constants (names in capitals,
// assigned plainly or by export, readonly, declare).
func declBash(x *extractor, n *ts.Node) { x.shDecl(n, 0) }

func (x *extractor) shDecl(d *ts.Node, depth int) {
	f := &x.l.fields
	if depth > maxDepth {
		return
	}
	switch x.kind(d) {
	case "function_definition":
		if name := x.child(d, f.name); name != nil {
			end := d.EndByte()
			if b := x.child(d, f.body); b != nil {
				end = b.StartByte()
			}
			x.add(d, Func, x.text(name), -1, x.head(d, end))
		}
	case "variable_assignment":
		if name := x.child(d, f.name); name != nil && isConstName(x.text(name)) {
			x.add(d, Const, x.text(name), -1, x.firstLine(d))
		}
	case "declaration_command":
		var names []string
		for _, c := range x.named(d) {
			if x.kind(&c) != "variable_assignment" {
				continue
			}
			if name := x.child(&c, f.name); name != nil && isConstName(x.text(name)) {
				names = append(names, x.text(name))
			}
		}
		if len(names) > 0 {
			x.add(d, Const, joinNames(names), -1, x.firstLine(d))
		}
	case "ERROR":
		for _, c := range x.named(d) {
			x.shDecl(&c, depth+1)
		}
	}
}
