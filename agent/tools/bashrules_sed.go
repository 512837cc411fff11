package tools

import (
	"fmt"
	"strings"
)

// checkSed allows sed to print: -i edits files in place, -f takes a
// script that is not read here, and the script's w and e commands (and
// the s command's w and e flags) write files and run commands. GNU sed
// takes options anywhere before "--", so every argument is looked at.
func checkSed(_ *checker, args []arg) string {
	p := &sedArgs{args: args}
	var operands []arg
	end := false
	for ; p.i < len(args); p.i++ {
		a := args[p.i]
		if end || !a.option() {
			operands = append(operands, a)
			continue
		}
		if !a.exact {
			return fmt.Sprintf("sed argument %s could expand to an option such as -i", a.show())
		}
		var why string
		switch {
		case a.text == "--":
			end = true
		case strings.HasPrefix(a.text, "--"):
			why = p.longOption(a)
		default:
			why = p.shortOptions(a)
		}
		if why != "" {
			return why
		}
	}
	if !p.given {
		if len(operands) == 0 {
			return ""
		}
		p.scripts = append(p.scripts, operands[0])
	}
	for _, s := range p.scripts {
		if !s.exact {
			return fmt.Sprintf("the sed script %s is not a plain string", s.show())
		}
		if why := sedScript(s.text); why != "" {
			return why
		}
	}
	return ""
}

// sedArgs reads sed's options: args[i] is the one being read, and the
// scripts they give are gathered.
type sedArgs struct {
	args    []arg
	i       int
	scripts []arg
	given   bool // a script came with -e or --expression
}

// takeScript takes the argument after the option as a script.
func (p *sedArgs) takeScript() {
	if p.i+1 < len(p.args) {
		p.i++
		p.scripts = append(p.scripts, p.args[p.i])
	}
}

// longOption reads a --name or --name=value option; it returns why it
// asks, "" for a safe one.
func (p *sedArgs) longOption(a arg) string {
	name, value, hasValue := strings.Cut(a.text, "=")
	switch {
	case long(name, "--in-place"):
		if !a.entry {
			return "sed --in-place edits files"
		}
	case long(name, "--file"):
		return "sed --file takes a script from a file, which is not checked"
	case long(name, "--expression"):
		p.given = true
		if hasValue {
			p.scripts = append(p.scripts, arg{text: value, exact: true})
		} else {
			p.takeScript()
		}
	case long(name, "--line-length"):
		if !hasValue {
			p.i++
		}
	case sedLong[name]:
	default:
		return fmt.Sprintf("sed option %s is not known to be safe", a.text)
	}
	return ""
}

// shortOptions reads a cluster of one-letter options such as -ne; it
// returns why it asks, "" for safe ones.
func (p *sedArgs) shortOptions(a arg) string {
	t := a.text
	for k := 1; k < len(t); k++ {
		switch t[k] {
		case 'i':
			if !a.entry {
				return "sed -i edits files"
			}
		case 'f':
			return "sed -f takes a script from a file, which is not checked"
		case 'e':
			p.given = true
			if k+1 < len(t) {
				p.scripts = append(p.scripts, arg{text: t[k+1:], exact: true})
			} else {
				p.takeScript()
			}
			return ""
		case 'l':
			if k+1 == len(t) {
				p.i++
			}
			return ""
		case 'n', 'r', 'E', 's', 'u', 'z', 'b':
		default:
			return fmt.Sprintf("sed option -%c is not known to be safe", t[k])
		}
	}
	return ""
}

var sedLong = map[string]bool{
	"--quiet": true, "--silent": true, "--regexp-extended": true, "--null-data": true,
	"--zero-terminated": true, "--separate": true, "--posix": true, "--debug": true,
	"--sandbox": true, "--unbuffered": true, "--binary": true, "--follow-symlinks": true,
}

// sedUnknown is why a sed script that is not understood asks.
const sedUnknown = "the sed script is not understood well enough to run without asking"

// sedScript reads a GNU sed script and returns why it asks: a command
// that writes (w, W, s///w) or runs (e, s///e), or anything it does not
// understand.
func sedScript(s string) string {
	i := 0
	for {
		for i < len(s) && strings.IndexByte(" \t\n;", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return ""
		}
		if s[i] == '#' {
			i = sedToEOL(s, i)
			continue
		}
		var ok bool
		if i, ok = sedAddresses(s, i); !ok || i >= len(s) {
			return sedUnknown
		}
		cmd := s[i]
		i++
		if cmd == '{' {
			continue // a command follows at once
		}
		var why string
		if i, why = sedCommand(s, i, cmd); why != "" {
			return why
		}
		i = sedBlank(s, i)
		if i < len(s) && strings.IndexByte(";\n}#", s[i]) < 0 {
			return sedUnknown
		}
	}
}

// sedBlank skips spaces and tabs at i.
func sedBlank(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// sedToEOL skips to the end of the line at i; a backslash escapes the
// next character, a line break too.
func sedToEOL(s string, i int) int {
	for i < len(s) && s[i] != '\n' {
		if s[i] == '\\' {
			i++
		}
		i++
	}
	return i
}

// sedAddresses skips a command's addresses at i, if any: one address, or
// a range (addr1,addr2 or addr1,+n / ~n), then any ! that negates them.
func sedAddresses(s string, i int) (int, bool) {
	var ok bool
	if i, ok = sedAddress(s, i); !ok {
		return i, false
	}
	i = sedBlank(s, i)
	if i < len(s) && s[i] == ',' {
		i = sedBlank(s, i+1)
		if i < len(s) && (s[i] == '+' || s[i] == '~') {
			i++
		}
		if i, ok = sedAddress(s, i); !ok {
			return i, false
		}
		i = sedBlank(s, i)
	}
	for i < len(s) && s[i] == '!' {
		i = sedBlank(s, i+1)
	}
	return i, true
}

// sedCommand skips the arguments of command cmd, whose letter ends at i;
// it returns why the command asks, "" for one that only prints.
func sedCommand(s string, i int, cmd byte) (int, string) {
	var ok bool
	switch cmd {
	case '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
	case 'l', 'L', 'q', 'Q':
		i = sedBlank(s, i)
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	case 'b', 't', 'T', ':', 'v':
		for i < len(s) && s[i] != ';' && s[i] != '\n' {
			i++
		}
	case 'a', 'i', 'c', 'r', 'R':
		i = sedToEOL(s, i) // text, or a file name to read
	case 'w', 'W':
		return i, fmt.Sprintf("sed %c writes a file", cmd)
	case 'e':
		return i, "sed e runs a command"
	case 'y':
		if i, ok = sedDelimited(s, i, 2); !ok {
			return i, sedUnknown
		}
	case 's':
		if i, ok = sedDelimited(s, i, 2); !ok {
			return i, sedUnknown
		}
		return sedFlags(s, i)
	default:
		return i, sedUnknown
	}
	return i, ""
}

// sedFlags skips the s command's flags at i; it returns why they ask:
// w writes a file, e runs the result.
func sedFlags(s string, i int) (int, string) {
	for i < len(s) {
		switch c := s[i]; {
		case c == 'w':
			return i, "sed s///w writes a file"
		case c == 'e':
			return i, "sed s///e runs the result as a command"
		case strings.IndexByte("gpiImM", c) >= 0, c >= '0' && c <= '9':
			i++
		default:
			return i, ""
		}
	}
	return i, ""
}

// sedAddress skips an address at i, if any: a line number (with
// ~step), $, /regex/ or \cregexc with I and M flags.
func sedAddress(s string, i int) (int, bool) {
	if i >= len(s) {
		return i, true
	}
	switch c := s[i]; {
	case c >= '0' && c <= '9':
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
			i++
		}
	case c == '$':
		i++
	case c == '/' || c == '\\':
		if c == '\\' {
			i++
		}
		var ok bool
		if i, ok = sedDelimited(s, i, 1); !ok {
			return i, false
		}
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
	}
	return i, true
}

// sedDelimited skips n parts closed by the delimiter at s[i], as GNU sed
// reads them: a backslash escapes the next character, and an unescaped
// newline is an error.
func sedDelimited(s string, i, n int) (int, bool) {
	if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
		return i, false
	}
	d := s[i]
	i++
	for ; n > 0; n-- {
		for {
			if i >= len(s) || s[i] == '\n' {
				return i, false
			}
			if s[i] == '\\' {
				i += 2
				continue
			}
			if s[i] == d {
				i++
				break
			}
			i++
		}
	}
	return i, true
}

// checkAwk allows -F and -v, and a program that neither runs commands
// (system, pipes, @load) nor writes files (>). Other options read the
// program from a file, load code or write profiles.
func checkAwk(_ *checker, args []arg) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.option() && !(a.exact && a.text == "--") {
			if !a.exact {
				return fmt.Sprintf("awk argument %s could expand to an option such as -f", a.show())
			}
			switch t := a.text; {
			case t == "-F" || t == "-v":
				i++
			case strings.HasPrefix(t, "-F") || strings.HasPrefix(t, "-v"):
			default:
				if !a.entry {
					return fmt.Sprintf("awk option %s is not known to be safe (-f, -i, -l, -o, -p and -d read programs, load code or write files)", t)
				}
			}
			continue
		}
		if a.exact && a.text == "--" {
			i++
			if i >= len(args) {
				return ""
			}
			a = args[i]
		}
		if !a.exact {
			return fmt.Sprintf("the awk program %s is not a plain string", a.show())
		}
		for _, bad := range []string{"system", "|", ">", "@"} {
			if strings.Contains(a.text, bad) {
				return fmt.Sprintf("the awk program holds %q, which can run commands or write files", bad)
			}
		}
		return "" // the rest are files and var=value
	}
	return ""
}
