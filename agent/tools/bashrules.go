package tools

import (
	"fmt"
	"strings"
)

// program is the rule for one program on the allowlist. A program that
// is not in the table runs with any arguments once an entry names it: the
// user who allows `python` or `rm` allows what they do.
type program struct {
	// never, when set, says why the program asks even when an entry
	// names it: it runs its arguments or input as a program, or changes
	// the shell itself.
	never string
	// wrap looks through a wrapper that only runs its argument as a
	// program (timeout, nice): it returns the inner command, checked like
	// any other, or why it asks.
	wrap func(args []arg) ([]arg, string)
	// check inspects the arguments after the program name and returns
	// why they ask, or ""; nil accepts any. Words an entry names are
	// marked (arg.entry) and are the user's choice.
	check func(c *checker, args []arg) string
}

const (
	runsPrograms = "runs other programs from its arguments or input"
	runsCode     = "runs shell code from its arguments"
	changesShell = "changes the shell's variables, options or command lookup"
)

// programs holds one rule per program, by the base name of the program
// word (`/usr/bin/find` is find). To add one, write a check that returns
// a short reason ("find -exec runs programs") for each argument that runs
// a program or writes a file, and list it here.
var programs = map[string]program{
	// Safe with any arguments: they read and print. Redirections are
	// still checked.
	"ls": {}, "cat": {}, "head": {}, "tail": {}, "wc": {}, "echo": {}, "pwd": {},
	"true": {}, "false": {}, "grep": {}, "egrep": {}, "fgrep": {}, "diff": {}, "cmp": {},
	"cut": {}, "tr": {}, "nl": {}, "od": {}, "stat": {}, "du": {}, "df": {}, "which": {},
	"basename": {}, "dirname": {}, "realpath": {}, "readlink": {}, "seq": {}, "sleep": {},
	"test": {}, "[": {}, "jq": {}, "comm": {}, "paste": {}, "rev": {}, "uname": {},
	"sha256sum": {}, "sha1sum": {}, "md5sum": {}, "file": {},

	// Checked arguments.
	"find":   {check: checkFind},
	"git":    {check: checkGit},
	"go":     {check: checkGo},
	"sed":    {check: checkSed},
	"awk":    {check: checkAwk},
	"gawk":   {check: checkAwk},
	"mawk":   {check: checkAwk},
	"sort":   {check: checkSort},
	"rg":     {check: checkRg},
	"tar":    {check: checkTar},
	"tee":    {check: checkTee},
	"uniq":   {check: checkUniq},
	"printf": {check: checkPrintf},
	"date":   {check: checkDate},
	"tree":   {check: checkTree},
	"sh":     {check: checkShell}, "bash": {check: checkShell}, "dash": {check: checkShell},
	"zsh": {check: checkShell}, "ksh": {check: checkShell}, "mksh": {check: checkShell},
	// Package scripts run any program: only the exact entry runs.
	"npm": {check: checkExact}, "npx": {check: checkExact}, "pnpm": {check: checkExact},
	"yarn": {check: checkExact}, "bun": {check: checkExact},
	// make runs whatever its makefile says: it runs without asking only
	// when an entry names it, and then with any arguments.
	"make": {},

	// Wrappers that only run their argument: the inner command is checked.
	"timeout": {wrap: wrapTimeout},
	"nice":    {wrap: wrapNice},

	// Never without asking.
	"xargs": {never: runsPrograms}, "parallel": {never: runsPrograms}, "watch": {never: runsPrograms},
	"env": {never: runsPrograms}, "sudo": {never: runsPrograms}, "doas": {never: runsPrograms},
	"su": {never: runsPrograms}, "runuser": {never: runsPrograms}, "nohup": {never: runsPrograms},
	"setsid": {never: runsPrograms}, "chroot": {never: runsPrograms}, "stdbuf": {never: runsPrograms},
	"unbuffer": {never: runsPrograms}, "strace": {never: runsPrograms}, "ltrace": {never: runsPrograms},
	"flock": {never: runsPrograms}, "script": {never: runsPrograms}, "busybox": {never: runsPrograms},
	"ionice": {never: runsPrograms}, "taskset": {never: runsPrograms}, "chrt": {never: runsPrograms},
	"time": {never: runsPrograms}, "command": {never: runsPrograms}, "builtin": {never: runsPrograms},
	"exec": {never: runsPrograms}, "ssh": {never: runsPrograms},
	"eval": {never: runsCode}, "source": {never: runsCode}, ".": {never: runsCode},
	"trap": {never: runsCode}, "fc": {never: runsCode}, "bind": {never: runsCode},
	"complete": {never: runsCode}, "mapfile": {never: runsCode}, "readarray": {never: runsCode},
	"set": {never: changesShell}, "shopt": {never: changesShell}, "export": {never: changesShell},
	"unset": {never: changesShell}, "declare": {never: changesShell}, "typeset": {never: changesShell},
	"local": {never: changesShell}, "readonly": {never: changesShell}, "let": {never: changesShell},
	"read": {never: changesShell}, "hash": {never: changesShell}, "alias": {never: changesShell},
	"enable": {never: changesShell},
}

// long reports whether t is the long option name, or an abbreviation of
// it that getopt_long accepts ("--out=x" for --output), with or without
// "=value".
func long(t, name string) bool {
	n, _, _ := strings.Cut(t, "=")
	return strings.HasPrefix(n, "--") && len(n) > 2 && strings.HasPrefix(name, n)
}

// short reports whether t is a cluster of short options ("-rno") that
// holds one of letters. A letter may really be the value of an earlier
// option (`sort -to` sets the separator to o): then the check asks when it
// need not, never the other way round.
func short(t, letters string) bool {
	return len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.ContainsAny(t[1:], letters)
}

// options calls f with each word before a "--" that is or could be an
// option, and returns the first reason f gives. An unknown word that
// could be an option asks.
func options(prog string, args []arg, f func(i int, t string) string) string {
	for i, a := range args {
		if a.exact && a.text == "--" {
			return ""
		}
		if a.entry || !a.option() {
			continue
		}
		if !a.exact {
			return fmt.Sprintf("%s argument %s could expand to an option", prog, a.show())
		}
		if why := f(i, a.text); why != "" {
			return why
		}
	}
	return ""
}

var findActions = map[string]string{
	"-exec": "runs programs", "-execdir": "runs programs", "-ok": "runs programs", "-okdir": "runs programs",
	"-delete": "deletes files",
	"-fprint": "writes a file", "-fprint0": "writes a file", "-fprintf": "writes a file", "-fls": "writes a file",
}

// checkFind refuses the actions that run programs or write files. find
// takes its expression after the paths, so no "--" ends the check.
func checkFind(_ *checker, args []arg) string {
	for _, a := range args {
		if a.entry {
			continue
		}
		if a.exact {
			if what, ok := findActions[a.text]; ok {
				return fmt.Sprintf("find %s %s", a.text, what)
			}
			continue
		}
		if a.option() {
			return fmt.Sprintf("find argument %s could expand to an action such as -exec", a.show())
		}
	}
	return ""
}

func checkSort(_ *checker, args []arg) string {
	return options("sort", args, func(_ int, t string) string {
		switch {
		case long(t, "--output") || short(t, "o"):
			return "sort -o writes a file"
		case long(t, "--compress-program"):
			return "sort --compress-program runs a program"
		case long(t, "--temporary-directory") || short(t, "T"):
			return "sort -T writes files in another directory"
		}
		return ""
	})
}

func checkRg(_ *checker, args []arg) string {
	return options("rg", args, func(_ int, t string) string {
		switch {
		case long(t, "--pre"):
			return "rg --pre runs a program on every file"
		case long(t, "--hostname-bin"):
			return "rg --hostname-bin runs a program"
		}
		return ""
	})
}

// checkTar allows listing an archive. Extraction and writing ask: where
// the members land depends on the archive, which is not read here.
func checkTar(_ *checker, args []arg) string {
	const why = "tar %s %s"
	for i, a := range args {
		if a.entry {
			continue
		}
		if !a.exact {
			if i == 0 || a.option() {
				return fmt.Sprintf("tar argument %s could expand to an option", a.show())
			}
			continue
		}
		t := a.text
		if strings.Contains(t, ":") && !strings.HasPrefix(t, "-") {
			return fmt.Sprintf(why, t, "names a remote archive, reached by running a program")
		}
		letters := ""
		switch {
		case i == 0 && !strings.HasPrefix(t, "-"):
			letters = t // old style: "tar tvf x.tar"
		case strings.HasPrefix(t, "--"):
			for _, d := range tarLong {
				if long(t, d.name) {
					return fmt.Sprintf(why, d.name, d.what)
				}
			}
		case strings.HasPrefix(t, "-"):
			letters = t[1:]
		}
		for _, d := range tarShort {
			if strings.ContainsRune(letters, d.letter) {
				return fmt.Sprintf(why, "-"+string(d.letter), d.what)
			}
		}
	}
	return ""
}

var tarLong = []struct{ name, what string }{
	{"--to-command", "runs a program"}, {"--use-compress-program", "runs a program"},
	{"--checkpoint-action", "runs a program"}, {"--info-script", "runs a program"},
	{"--new-volume-script", "runs a program"}, {"--rsh-command", "runs a program"},
	{"--rmt-command", "runs a program"}, {"--index-file", "writes a file"},
	{"--listed-incremental", "writes a file"}, {"--volno-file", "writes a file"},
	{"--extract", "extracts files"}, {"--get", "extracts files"}, {"--create", "writes an archive"},
	{"--append", "writes an archive"}, {"--update", "writes an archive"}, {"--delete", "writes an archive"},
	{"--concatenate", "writes an archive"}, {"--catenate", "writes an archive"},
	{"--absolute-names", "writes outside the directory"},
}

var tarShort = []struct {
	letter rune
	what   string
}{
	{'x', "extracts files"}, {'c', "writes an archive"}, {'r', "writes an archive"},
	{'u', "writes an archive"}, {'A', "writes an archive"}, {'I', "runs a program"},
	{'F', "runs a program"}, {'g', "writes a file"}, {'P', "writes outside the directory"},
}

// checkTee allows tee to pass its input through, and to /dev/null.
func checkTee(c *checker, args []arg) string {
	end := false
	for _, a := range args {
		switch {
		case a.entry:
		case !end && a.exact && a.text == "--":
			end = true
		case !end && a.option():
			if !a.exact {
				return fmt.Sprintf("tee argument %s could expand to a file name", a.show())
			}
		case !(a.exact && a.text == "/dev/null"):
			return fmt.Sprintf("tee %s writes a file", a.show())
		}
	}
	return ""
}

// checkUniq allows one file operand: a second is written.
func checkUniq(_ *checker, args []arg) string {
	operands := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.option() {
			if !a.exact {
				return fmt.Sprintf("uniq argument %s could expand to an option", a.show())
			}
			if a.text == "-f" || a.text == "-s" || a.text == "-w" {
				i++ // the value
			}
			continue
		}
		if operands++; operands > 1 {
			return "uniq with a second file operand writes it"
		}
	}
	return ""
}

func checkPrintf(_ *checker, args []arg) string {
	if len(args) == 0 || args[0].entry || !args[0].option() {
		return ""
	}
	if !args[0].exact || strings.HasPrefix(args[0].text, "-v") {
		return "printf -v sets a shell variable"
	}
	return ""
}

func checkDate(_ *checker, args []arg) string {
	return options("date", args, func(_ int, t string) string {
		if long(t, "--set") || short(t, "s") {
			return "date -s sets the clock"
		}
		return ""
	})
}

func checkTree(_ *checker, args []arg) string {
	return options("tree", args, func(_ int, t string) string {
		if short(t, "o") || long(t, "--output") {
			return "tree -o writes a file"
		}
		return ""
	})
}

// checkShell allows a shell to run a script file: options before it can
// run a command string (-c) or a startup file, and with no script the
// shell runs what it reads (`ls | sh`).
func checkShell(_ *checker, args []arg) string {
	for _, a := range args {
		if a.entry {
			continue
		}
		if a.option() || strings.HasPrefix(a.text, "+") {
			return fmt.Sprintf("shell option %s can run a command string or a startup file; only `sh script` runs without asking", a.show())
		}
		return "" // the script; what follows are its arguments
	}
	return "a shell with no script runs the commands it reads"
}

// checkExact allows only the words of the entry itself.
func checkExact(_ *checker, args []arg) string {
	for _, a := range args {
		if !a.entry {
			return fmt.Sprintf("package scripts run any program: only an exact %s entry runs without asking, and %s is not in it", AllowSetting, a.show())
		}
	}
	return ""
}

// wrapperOptions skips a wrapper's options, which known sorts: an option
// it knows, and whether its value is the next argument. It returns the
// index of the first argument after them, or why the line is not allowed.
func wrapperOptions(args []arg, known func(opt string) (ok, valueNext bool)) (int, string) {
	i := 0
	for ; i < len(args) && args[i].option(); i++ {
		a := args[i]
		if !a.exact {
			return 0, fmt.Sprintf("argument %s could expand to an option", a.show())
		}
		if a.text == "--" {
			return i + 1, ""
		}
		ok, valueNext := known(a.text)
		if !ok {
			return 0, fmt.Sprintf("option %s is not known", a.show())
		}
		if valueNext {
			i++
		}
	}
	return i, ""
}

// wrapTimeout looks through `timeout [options] DURATION command…`.
func wrapTimeout(args []arg) ([]arg, string) {
	i, why := wrapperOptions(args, func(t string) (bool, bool) {
		switch {
		case t == "-s" || t == "-k":
			return true, true
		case t == "--preserve-status" || t == "--foreground" || t == "-v" || t == "--verbose",
			strings.HasPrefix(t, "-s") || strings.HasPrefix(t, "-k"),
			strings.HasPrefix(t, "--signal=") || strings.HasPrefix(t, "--kill-after="):
			return true, false
		}
		return false, false
	})
	if why != "" {
		return nil, why
	}
	if i+1 >= len(args) {
		return nil, "has no command to run"
	}
	return args[i+1:], "" // after the duration
}

// wrapNice looks through `nice [-n N] command…`.
func wrapNice(args []arg) ([]arg, string) {
	i, why := wrapperOptions(args, func(t string) (bool, bool) {
		switch {
		case t == "-n":
			return true, true
		case strings.HasPrefix(t, "-n") || strings.HasPrefix(t, "--adjustment=") || isDigits(strings.TrimPrefix(t, "-")):
			return true, false
		}
		return false, false
	})
	if why != "" {
		return nil, why
	}
	if i >= len(args) {
		return nil, "has no command to run"
	}
	return args[i:], ""
}
