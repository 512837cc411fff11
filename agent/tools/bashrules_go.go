package tools

import (
	"fmt"
	"slices"
	"strings"
)

// goCommands are the go commands that run without an entry naming them:
// they build, test and report. Their flags are checked: -exec, -toolexec
// and -vettool run programs, and files they write (-o, profiles) must be
// in the workspace.
var goCommands = map[string]bool{
	"test": true, "vet": true, "build": true, "list": true, "version": true, "env": true, "doc": true,
}

// goPathFlags write the file or directory they name.
var goPathFlags = map[string]bool{
	"o": true, "coverprofile": true, "cpuprofile": true, "memprofile": true, "blockprofile": true,
	"mutexprofile": true, "trace": true, "outputdir": true, "pkgdir": true, "testlogfile": true,
	"gocoverdir": true, "fuzzcachedir": true,
}

// checkGo allows the go commands above; others (run, generate, tool,
// install, get, mod, fmt…) run programs or change files and need an entry
// that names them ("go run").
func checkGo(c *checker, args []arg) string {
	i := 0
	if i < len(args) && args[i].exact && (args[i].text == "-C" || strings.HasPrefix(args[i].text, "-C=")) {
		dir, ok := strings.CutPrefix(args[i].text, "-C=")
		d := arg{text: dir, exact: true, entry: args[i].entry}
		if !ok {
			if i++; i >= len(args) {
				return ""
			}
			d = args[i]
		}
		if !d.entry && !c.inside(d) {
			return fmt.Sprintf("go -C %s works outside the workspace", d.show())
		}
		i++
	}
	if i >= len(args) {
		return ""
	}
	sub := args[i]
	if !sub.exact {
		return fmt.Sprintf("the go command %s is not a plain word", sub.show())
	}
	if !sub.entry && !goCommands[sub.text] {
		return fmt.Sprintf("go %s runs programs or changes files; only an entry naming it (\"go %s\") lets it run without asking", sub.text, sub.text)
	}
	rest := args[i+1:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a.entry || !a.option() {
			continue
		}
		if !a.exact {
			return fmt.Sprintf("go argument %s could expand to a flag such as -exec", a.show())
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a.text, "-"), "-"), "=")
		name = strings.TrimPrefix(name, "test.") // after -args, the test binary's own flags
		next := func() (arg, bool) {
			if hasValue {
				return arg{text: value, exact: true}, true
			}
			if j+1 < len(rest) {
				j++
				return rest[j], true
			}
			return arg{}, false
		}
		switch {
		case name == "exec" || name == "toolexec" || name == "vettool":
			return fmt.Sprintf("go %s -%s runs a program", sub.text, name)
		case goPathFlags[name]:
			if v, ok := next(); ok && !c.inside(v) {
				return fmt.Sprintf("go %s -%s %s writes outside the workspace", sub.text, name, v.show())
			}
		case name == "modfile":
			return fmt.Sprintf("go %s -modfile can write another go.mod", sub.text)
		case name == "mod":
			if v, ok := next(); ok && !(v.exact && (v.text == "readonly" || v.text == "vendor")) {
				return fmt.Sprintf("go %s -mod=%s can change go.mod", sub.text, v.text)
			}
		case name == "ldflags" || name == "gcflags" || name == "asmflags" || name == "gccgoflags":
			if v, ok := next(); ok {
				if why := goToolFlags(name, v); why != "" {
					return fmt.Sprintf("go %s -%s %s", sub.text, name, why)
				}
			}
		case sub.text == "env" && (name == "w" || name == "u"):
			return fmt.Sprintf("go env -%s changes Go's configuration", name)
		}
	}
	return ""
}

// goToolFlags allows the linker and compiler flags that only shape the
// output: -s -w -X for the linker, -N -l -m for the compiler. Others can
// name an external linker or write profiles.
func goToolFlags(name string, v arg) string {
	if !v.exact {
		return "is not a plain word"
	}
	allowed := map[string][]string{
		"ldflags": {"-s", "-w", "-X"},
		"gcflags": {"-N", "-l", "-m", "-m=1", "-m=2", "-S", "-B"},
	}[name]
	fields := strings.Fields(v.text)
	if len(fields) > 0 {
		if pattern, flags, ok := strings.Cut(fields[0], "="); ok && !strings.HasPrefix(pattern, "-") {
			fields[0] = flags // "all=-N -l"
		}
	}
	for k := 0; k < len(fields); k++ {
		f := fields[k]
		if f == "" {
			continue
		}
		switch {
		case name == "ldflags" && f == "-X":
			k++ // main.version=1
		case name == "ldflags" && strings.HasPrefix(f, "-X="):
		case slices.Contains(allowed, f):
		default:
			return fmt.Sprintf("holds %s, which is not known to be safe", f)
		}
	}
	return ""
}
