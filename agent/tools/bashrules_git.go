package tools

import (
	"fmt"
	"slices"
	"strings"
)

// checkGit allows git's read-only commands, and any of git's own commands
// an entry names ("git commit"). Options that set configuration (-c),
// choose another repository or exec path (whose configuration and hooks
// run programs) ask, and so do options that run programs or write files
// whatever the command (--output, --ext-diff, --upload-pack…). A command
// git does not ship is an alias, which can run anything: it asks.
func checkGit(c *checker, args []arg) string {
	i := 0
global:
	for ; i < len(args) && args[i].option(); i++ {
		a := args[i]
		if a.entry {
			continue
		}
		if !a.exact {
			return fmt.Sprintf("git argument %s could expand to an option", a.show())
		}
		t := a.text
		switch {
		case strings.HasPrefix(t, "-c") || long(t, "--config-env"):
			return "git -c sets configuration, which can run programs (core.pager, alias.*, core.fsmonitor)"
		case long(t, "--exec-path"):
			return "git --exec-path chooses where git finds its programs"
		case long(t, "--git-dir") || long(t, "--work-tree") || long(t, "--bare") || long(t, "--namespace"):
			return fmt.Sprintf("git %s chooses another repository, whose configuration can run programs", t)
		case t == "-C":
			i++
			if i >= len(args) {
				break global
			}
			if !args[i].entry && !c.inside(args[i]) {
				return fmt.Sprintf("git -C %s works outside the workspace", args[i].show())
			}
		case gitGlobal[t]:
		default:
			return fmt.Sprintf("git option %s is not known to be safe", t)
		}
	}
	if i >= len(args) {
		return "" // git, git --version
	}
	sub := args[i]
	if !sub.exact {
		return fmt.Sprintf("the git command %s is not a plain word", sub.show())
	}
	if !gitCommands[sub.text] {
		return fmt.Sprintf("%q is not one of git's own commands (an alias can run anything)", sub.text)
	}
	rest := args[i+1:]
	if why := options("git "+sub.text, rest, func(_ int, t string) string { return gitDenied(sub.text, t) }); why != "" {
		return why
	}
	if sub.entry {
		return "" // the user named this command
	}
	ro, ok := gitReadOnly[sub.text]
	if !ok {
		return fmt.Sprintf("git %s can change the repository or run programs; only an entry naming it (\"git %s\") lets it run without asking", sub.text, sub.text)
	}
	if ro != nil {
		return ro(rest)
	}
	return ""
}

// gitDenied returns why an option of git command sub runs a program or
// writes a file.
func gitDenied(sub, t string) string {
	switch {
	case long(t, "--output"):
		return fmt.Sprintf("git %s --output writes a file", sub)
	case long(t, "--ext-diff"):
		return fmt.Sprintf("git %s --ext-diff runs an external diff program", sub)
	case long(t, "--upload-pack") || long(t, "--receive-pack") || long(t, "--exec") || long(t, "--extcmd"):
		return fmt.Sprintf("git %s %s runs a program", sub, t)
	case long(t, "--open-files-in-pager") || sub == "grep" && short(t, "O"):
		return "git grep -O runs a program"
	case sub == "rebase" && short(t, "x"):
		return "git rebase -x runs a program"
	case sub == "clone" && (short(t, "cu") || long(t, "--config") || long(t, "--template")):
		return fmt.Sprintf("git clone %s sets configuration or hooks, which can run programs", t)
	case (sub == "format-patch" || sub == "archive") && short(t, "o"):
		return fmt.Sprintf("git %s -o writes files", sub)
	}
	return ""
}

// gitGlobal are git's options before the command that neither change the
// configuration nor the repository.
var gitGlobal = map[string]bool{
	"-p": true, "--paginate": true, "-P": true, "--no-pager": true, "--no-replace-objects": true,
	"--literal-pathspecs": true, "--glob-pathspecs": true, "--noglob-pathspecs": true,
	"--icase-pathspecs": true, "--no-optional-locks": true, "--no-advice": true, "--version": true,
}

// gitReadOnly are the commands that run without an entry naming them;
// the function, when set, checks that the arguments keep the command
// read-only (`git branch` lists, `git branch x` creates).
var gitReadOnly = map[string]func(args []arg) string{
	"status": nil, "log": nil, "diff": nil, "show": nil, "blame": nil, "annotate": nil,
	"shortlog": nil, "describe": nil, "rev-parse": nil, "rev-list": nil, "ls-files": nil,
	"ls-tree": nil, "cat-file": nil, "grep": nil, "merge-base": nil, "name-rev": nil,
	"diff-tree": nil, "diff-files": nil, "diff-index": nil, "show-ref": nil, "for-each-ref": nil,
	"count-objects": nil, "check-ignore": nil, "check-attr": nil, "whatchanged": nil,
	"cherry": nil, "range-diff": nil, "version": nil, "var": nil, "show-branch": nil,
	"branch":   gitListing("branch", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "-i", "--ignore-case", "--show-current", "--no-color", "--no-column", "--no-abbrev"),
	"tag":      gitListing("tag", "-i", "--ignore-case", "--no-color", "--no-column"),
	"stash":    gitFirstWord("stash", false, "list", "show"),
	"worktree": gitFirstWord("worktree", false, "list"),
	"remote":   gitFirstWord("remote", true, "get-url"),
	"reflog":   gitReflog,
	"config":   gitConfig,
}

// gitListing allows `git branch` and `git tag` in their listing forms:
// the flags given, and operands (patterns) only with an option that
// makes the command list.
func gitListing(sub string, flags ...string) func([]arg) string {
	implies := []string{"--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}
	valued := []string{"--sort", "--format", "--color", "--column", "--abbrev"}
	return func(args []arg) string {
		list, operands := false, false
		for _, a := range args {
			if !a.option() {
				operands = true
				continue
			}
			t := a.text
			switch {
			case !a.exact:
				return fmt.Sprintf("git %s argument %s could expand to an option", sub, a.show())
			case t == "-l" || slices.ContainsFunc(implies, func(l string) bool { return long(t, l) }),
				sub == "tag" && strings.HasPrefix(t, "-n"):
				list = true
			case slices.ContainsFunc(valued, func(l string) bool { return long(t, l) }), slices.Contains(flags, t):
			default:
				return fmt.Sprintf("git %s %s can change branches or tags; only listing runs without asking", sub, t)
			}
		}
		if operands && !list {
			return fmt.Sprintf("git %s with a name creates or changes it; only listing runs without asking (add --list)", sub)
		}
		return ""
	}
}

// gitFirstWord allows the command when its first word is one of words,
// or, when bare is set, when it has none (`git remote -v`).
func gitFirstWord(sub string, bare bool, words ...string) func([]arg) string {
	return func(args []arg) string {
		for _, a := range args {
			if a.option() {
				continue
			}
			if a.exact && slices.Contains(words, a.text) {
				return ""
			}
			return fmt.Sprintf("git %s %s can change the repository; only git %s %s runs without asking", sub, a.show(), sub, strings.Join(words, ", "))
		}
		if bare {
			return ""
		}
		return fmt.Sprintf("git %s without %s changes the repository", sub, strings.Join(words, " or "))
	}
}

func gitReflog(args []arg) string {
	for _, a := range args {
		if !a.option() {
			if a.exact && (a.text == "expire" || a.text == "delete" || a.text == "drop") {
				return fmt.Sprintf("git reflog %s changes the repository", a.text)
			}
			return ""
		}
	}
	return ""
}

// gitConfig allows reading configuration: the get and list forms, old
// and new.
func gitConfig(args []arg) string {
	read := false
	for _, a := range args {
		if !a.exact {
			return "git config with a value that is not a plain word is not known to be read-only"
		}
		t := a.text
		switch {
		case t == "get" || t == "list":
			return ""
		case t == "-l" || long(t, "--list") || long(t, "--get") || long(t, "--get-all") ||
			long(t, "--get-regexp") || long(t, "--get-urlmatch") || long(t, "--get-color") || long(t, "--get-colorbool"):
			read = true
		case t == "-e" || long(t, "--edit") || long(t, "--add") || long(t, "--unset") || long(t, "--unset-all") ||
			long(t, "--replace-all") || long(t, "--rename-section") || long(t, "--remove-section"):
			return fmt.Sprintf("git config %s changes the configuration", t)
		}
	}
	if !read {
		return "git config without --get or --list changes the configuration"
	}
	return ""
}

// gitCommands are the commands git ships (git --list-cmds=main); any
// other name is an alias or a git-* program on PATH.
var gitCommands = func() map[string]bool {
	m := make(map[string]bool)
	for _, c := range strings.Fields(`add am annotate apply archive backfill bisect blame branch bugreport
		bundle cat-file check-attr check-ignore check-mailmap check-ref-format checkout checkout-index
		cherry cherry-pick clean clone column commit commit-graph commit-tree config count-objects
		credential credential-cache credential-store daemon describe diagnose diff diff-files diff-index
		diff-pairs diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg
		for-each-ref for-each-repo format-patch fsck fsck-objects gc get-tar-commit-id grep hash-object
		help hook http-backend http-fetch http-push imap-send index-pack init init-db instaweb
		interpret-trailers last-modified log ls-files ls-remote ls-tree mailinfo mailsplit maintenance
		merge merge-base merge-file merge-index merge-octopus merge-one-file merge-ours merge-recursive
		merge-resolve merge-subtree merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes
		pack-objects pack-redundant pack-refs patch-id prune prune-packed pull push quiltimport
		range-diff read-tree rebase receive-pack reflog refs remote repack replace replay repo
		request-pull rerere reset restore rev-list rev-parse revert rm send-pack shell shortlog show
		show-branch show-index show-ref sparse-checkout stage stash status stripspace submodule subtree
		switch symbolic-ref tag unpack-file unpack-objects update-index update-ref update-server-info
		upload-archive upload-pack var verify-commit verify-pack verify-tag version whatchanged
		worktree write-tree`) {
		m[c] = true
	}
	return m
}()
