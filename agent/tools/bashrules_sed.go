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
	var scripts []arg
	given := false // a script came with -e or --expression
	var operands []arg
	end := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if end || !a.option() {
			operands = append(operands, a)
			continue
		}
		if !a.exact {
			return fmt.Sprintf("sed argument %s could expand to an option such as -i", a.show())
		}
		t := a.text
		next := func() {
			if i+1 < len(args) {
				i++
				scripts = append(scripts, args[i])
			}
		}
		switch {
		case t == "--":
			end = true
		case strings.HasPrefix(t, "--"):
			name, value, hasValue := strings.Cut(t, "=")
			switch {
			case long(name, "--in-place"):
				if !a.entry {
					return "sed --in-place edits files"
				}
			case long(name, "--file"):
				return "sed --file takes a script from a file, which is not checked"
			case long(name, "--expression"):
				given = true
				if hasValue {
					scripts = append(scripts, arg{text: value, exact: true})
				} else {
					next()
				}
			case long(name, "--line-length"):
				if !hasValue {
					i++
				}
			case sedLong[name]:
			default:
				return fmt.Sprintf("sed option %s is not known to be safe", t)
			}
		default:
		cluster:
			for k := 1; k < len(t); k++ {
				switch t[k] {
				case 'i':
					if !a.entry {
						return "sed -i edits files"
					}
				case 'f':
					return "sed -f takes a script from a file, which is not checked"
				case 'e':
					given = true
					if k+1 < len(t) {
						scripts = append(scripts, arg{text: t[k+1:], exact: true})
					} else {
						next()
					}
					break cluster
				case 'l':
					if k+1 == len(t) {
						i++
					}
					break cluster
				case 'n', 'r', 'E', 's', 'u', 'z', 'b':
				default:
					return fmt.Sprintf("sed option -%c is not known to be safe", t[k])
				}
			}
		}
	}
	if !given {
		if len(operands) == 0 {
			return ""
		}
		scripts = append(scripts, operands[0])
	}
	for _, s := range scripts {
		if !s.exact {
			return fmt.Sprintf("the sed script %s is not a plain string", s.show())
		}
		if why := sedScript(s.text); why != "" {
			return why
		}
	}
	return ""
}

var sedLong = map[string]bool{
	"--quiet": true, "--silent": true, "--regexp-extended": true, "--null-data": true,
	"--zero-terminated": true, "--separate": true, "--posix": true, "--debug": true,
	"--sandbox": true, "--unbuffered": true, "--binary": true, "--follow-symlinks": true,
}

// sedScript reads a GNU sed script and returns why it asks: a command
// that writes (w, W, s///w) or runs (e, s///e), or anything it does not
// understand.
func sedScript(s string) string {
	const unknown = "the sed script is not understood well enough to run without asking"
	i := 0
	blank := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	toEOL := func() {
		for i < len(s) && s[i] != '\n' {
			if s[i] == '\\' {
				i++
			}
			i++
		}
	}
	for {
		for i < len(s) && strings.IndexByte(" \t\n;", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return ""
		}
		if s[i] == '#' {
			toEOL()
			continue
		}
		var ok bool
		if i, ok = sedAddress(s, i); !ok {
			return unknown
		}
		blank()
		if i < len(s) && s[i] == ',' {
			i++
			blank()
			if i < len(s) && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if i, ok = sedAddress(s, i); !ok {
				return unknown
			}
			blank()
		}
		for i < len(s) && s[i] == '!' {
			i++
			blank()
		}
		if i >= len(s) {
			return unknown
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{':
			continue // a command follows at once
		case '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			blank()
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case 'b', 't', 'T', ':', 'v':
			for i < len(s) && s[i] != ';' && s[i] != '\n' {
				i++
			}
		case 'a', 'i', 'c', 'r', 'R':
			toEOL() // text, or a file name to read
		case 'w', 'W':
			return fmt.Sprintf("sed %c writes a file", cmd)
		case 'e':
			return "sed e runs a command"
		case 'y':
			if i, ok = sedDelimited(s, i, 2); !ok {
				return unknown
			}
		case 's':
			if i, ok = sedDelimited(s, i, 2); !ok {
				return unknown
			}
		flags:
			for i < len(s) {
				switch c := s[i]; {
				case c == 'w':
					return "sed s///w writes a file"
				case c == 'e':
					return "sed s///e runs the result as a command"
				case strings.IndexByte("gpiImM", c) >= 0, c >= '0' && c <= '9':
					i++
				default:
					break flags
				}
			}
		default:
			return unknown
		}
		blank()
		if i < len(s) && strings.IndexByte(";\n}#", s[i]) < 0 {
			return unknown
		}
	}
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
