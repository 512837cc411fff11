package tools

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// testAllow is the allowlist of the decision table: what a user who
// trusts the agent with reading, searching, testing and committing might
// write.
var testAllow = []string{
	"ls", "cat", "echo", "pwd", "printf", "head -n", "wc -l", "find", "grep", "rg",
	"git", "git commit", "go", "go run", "sed", "awk", "sort", "tar", "tee", "uniq",
	"make", "npm test", "sh", "xargs", "cd",
}

// bashCases are command lines and what the allowlist makes of them: ""
// runs without asking; otherwise a part of the reason the user is asked.
var bashCases = []struct {
	command string
	why     string
	allow   []string // instead of testAllow
}{
	// Allowed, with the shell's structure around them.
	{command: "ls"},
	{command: "ls -la src"},
	{command: "  \t ls"},
	{command: "ls | wc -l"},
	{command: "ls && echo done || echo failed"},
	{command: "ls; pwd\n\npwd"},
	{command: "(ls) && { pwd; echo x; }"},
	{command: "! ls"},
	{command: "time ls"},
	{command: "echo $(ls) `pwd`"},
	{command: `echo "$(git status --short)"`},
	{command: "ls \\\n-la"},
	{command: "echo hi # and a comment; rm -rf x"},
	{command: "echo *.go $HOME ${HOME} ${#HOME} $'\\x41'"},
	{command: "cat <(ls) < /etc/passwd"}, // reading is not confined
	{command: "cat <<EOF\nhello $(pwd)\nEOF"},
	{command: "cat <<'EOF'\n$(rm -rf x)\nEOF"}, // quoted: not expanded
	{command: "cat <<< hi"},
	{command: "ls 2>&1 >/dev/null | head -n 5"},
	{command: "ls &>/dev/null"},
	{command: "echo oops >&2 >/dev/stderr"},
	{command: "LC_ALL=C sort -u f.txt"},
	{command: "find . -name '*.go' -type f -print"},
	{command: "find . -newer go.mod -name x"},
	{command: "git status"},
	{command: "git --no-pager log --oneline -5"},
	{command: "git diff HEAD~1 -- main.go"},
	{command: "git log -- *.go"}, // after --, globs are paths
	{command: "git -C sub status"},
	{command: "git branch -a"},
	{command: "git branch --list 'feat*'"},
	{command: "git config --get user.name"},
	{command: "git stash list"},
	{command: "git commit -m 'fix: x'"}, // named by an entry
	{command: "go test ./..."},
	{command: "go test -run TestX -count=1 -coverprofile=cover.out ./agent/..."},
	{command: "go build -o bin/app -ldflags '-s -w -X main.version=1' ./cmd/app"},
	{command: "go vet ./... && go list -m all"},
	{command: "go run ./cmd/x"}, // named by an entry
	{command: "sed -n '1,5p' f.go"},
	{command: "sed -e 's/a/b/g' -e '/x/d' -e '$!N' f"},
	{command: "sed -E '/^#/{s/#//;p}' f"},
	{command: "awk '{print $1}' f"},
	{command: "awk -F: -v n=1 '$1 == \"x\" {print}' f"},
	{command: "sort -k2 -t, -n f"},
	{command: "grep -rn TODO . | sort | uniq"},
	{command: "rg -n TODO --pretty"},
	{command: "tar -tzf x.tgz"},
	{command: "make test"},
	{command: "npm test"},
	{command: "timeout 60 go test ./..."},
	{command: "nice -n 5 go vet ./..."},
	{command: "ls | tee /dev/null"},
	{command: "sh scripts/check.sh --fast"},

	// Flags that run programs or write files.
	{command: "find . -exec touch {} \\;", why: "find -exec runs programs"},
	{command: "find /etc/passwd -fprint /tmp/y", why: "find -fprint writes a file"},
	{command: "find . -name x -fprint /tmp/y", why: "find -fprint writes a file"},
	{command: "find . -name x -fprintf /tmp/y %p", why: "find -fprintf writes a file"},
	{command: "find . -name x -ok rm {} \\;", why: "find -ok runs programs"},
	{command: "find . -delete", why: "find -delete deletes files"},
	{command: "'find' . -exec rm {} +", why: "find -exec runs programs"},
	{command: "f\\ind . -exec rm {} +", why: "find -exec runs programs"},
	{command: `find . -e"xec" rm {} +`, why: "find -exec runs programs"},
	{command: "find . -e*", why: `find argument "-e…" could expand to an action`},
	{command: "find . $ACTION", why: "could expand to an action"},
	{command: "git -c core.pager=sh git log", why: "git -c sets configuration"},
	{command: "git log --output=/tmp/x", why: "git log --output writes a file"},
	{command: "git log --output /tmp/x", why: "git log --output writes a file"},
	{command: "git diff --out=/tmp/x", why: "git diff --output writes a file"},
	{command: "git diff --ext-diff", why: "--ext-diff runs an external diff program"},
	{command: "git --exec-path=/tmp status", why: "git --exec-path"},
	{command: "git --git-dir=evil.git status", why: "chooses another repository"},
	{command: "git -C /tmp status", why: `git -C "/tmp" works outside the workspace`},
	{command: "git -C ../other status", why: "works outside the workspace"},
	{command: "git grep -O vim x", why: "git grep -O runs a program"},
	{command: "git log $(echo --output=/tmp/x)", why: "could expand to an option"},
	{command: "git push", why: `only an entry naming it ("git push")`},
	{command: "git st", why: `"st" is not one of git's own commands`},
	{command: "git branch newbranch", why: "git branch with a name creates"},
	{command: "git branch -D main", why: "git branch -D can change"},
	{command: "git stash", why: "git stash without list or show"},
	{command: "git config core.pager sh", why: "git config without --get"},
	{command: "sed -i s/a/b/ f", why: "sed -i edits files"},
	{command: "sed -ni p f", why: "sed -i edits files"},
	{command: "sed p f -i.bak", why: "sed -i edits files"}, // GNU sed permutes
	{command: "sed --in-place=.bak s/a/b/ f", why: "sed --in-place edits files"},
	{command: "sed --in s/a/b/ f", why: "sed --in-place edits files"},
	{command: "sed 'w /tmp/x' f", why: "sed w writes a file"},
	{command: "sed 's/a/b/w /tmp/x' f", why: "sed s///w writes a file"},
	{command: "sed -e p -e 's/x/y/e' f", why: "sed s///e runs"},
	{command: "sed '1e id' f", why: "sed e runs a command"},
	{command: "sed -f script.sed f", why: "sed -f takes a script from a file"},
	{command: `sed "$(cat s)" f`, why: "could expand to an option"},
	{command: "sed 's/a/b/;k' f", why: "not understood"},
	{command: `awk 'BEGIN{system("x")}'`, why: `awk program holds "system"`},
	{command: `awk '{print > "/tmp/x"}' f`, why: `awk program holds ">"`},
	{command: `awk '{print | "sh"}' f`, why: `awk program holds "|"`},
	{command: "awk -f prog.awk f", why: "awk option -f is not known to be safe"},
	{command: "sort -o /tmp/x f", why: "sort -o writes a file"},
	{command: "sort --output=/tmp/x f", why: "sort -o writes a file"},
	{command: "sort -ro x f", why: "sort -o writes a file"},
	{command: "sort --compress-program=sh f", why: "sort --compress-program runs a program"},
	{command: "go test -exec /tmp/evil ./...", why: "go test -exec runs a program"},
	{command: "go test -toolexec=/tmp/x ./...", why: "go test -toolexec runs a program"},
	{command: "go vet -vettool=/tmp/x ./...", why: "go vet -vettool runs a program"},
	{command: "go build -o /usr/local/bin/x .", why: `go build -o "/usr/local/bin/x" writes outside the workspace`},
	{command: "go test ./... -args -test.cpuprofile=/tmp/c.out", why: "-cpuprofile \"/tmp/c.out\" writes outside"},
	{command: "go test -ldflags=-extld=/tmp/sh ./...", why: "holds -extld=/tmp/sh"},
	{command: "go generate ./...", why: `only an entry naming it ("go generate")`},
	{command: "go env -w GOFLAGS=-x", why: "go env -w changes"},
	{command: "go run ./cmd/x", why: `only an entry naming it ("go run")`, allow: []string{"go"}},
	{command: "cd /tmp && go build -o x .", why: "writes outside the workspace"},
	{command: "rg --pre ./x TODO", why: "rg --pre runs a program"},
	{command: "tar -xzf x.tgz", why: "tar -x extracts files"},
	{command: "tar xf x.tar", why: "tar -x extracts files"},
	{command: "tar --to-command=sh -tf x.tar", why: "tar --to-command runs a program"},
	{command: "tar -I sh -tf x", why: "tar -I runs a program"},
	{command: "tar tvf host:x.tar", why: "remote archive"},
	{command: "printf -v PATH /tmp", why: "printf -v sets a shell variable"},
	{command: "ls | tee /tmp/x", why: `tee "/tmp/x" writes a file`},
	{command: "uniq in out", why: "uniq with a second file operand"},
	{command: "npm test -- --watch", why: "only an exact bash_allow entry"},

	// Redirections that write.
	{command: "echo hi > file", why: "redirection > \"file\" writes"},
	{command: "echo hi >> file", why: "redirection >> \"file\" writes"},
	{command: "echo hi &> file", why: "writes to a file"},
	{command: "echo hi >| file", why: "writes to a file"},
	{command: "ls >& file", why: "writes to a file"},
	{command: "cat <> file", why: "writes to a file"},
	{command: "ls > $OUT", why: "writes to a file"},
	{command: "{ ls; } > file", why: "writes to a file"},
	{command: "echo $(ls > f)", why: "writes to a file"},

	// Escapes through the shell.
	{command: "ls | sh", why: "a shell with no script runs the commands it reads"},
	{command: "sh -c 'rm -rf x'", why: `shell option "-c" can run a command string`},
	{command: "ls; rm -rf x", why: "rm is not on the bash_allow list"},
	{command: "ls\nrm -rf x", why: "rm is not on the bash_allow list"},
	{command: "ls || rm x", why: "rm is not on the bash_allow list"},
	{command: "ls | (rm x)", why: "rm is not on the bash_allow list"},
	{command: "echo $(rm x)", why: "rm is not on the bash_allow list"},
	{command: "echo \"$(echo $(rm x))\"", why: "rm is not on the bash_allow list"},
	{command: "echo `rm x`", why: "rm is not on the bash_allow list"},
	{command: "cat <(rm x)", why: "rm is not on the bash_allow list"},
	{command: "cat <<EOF\n$(rm x)\nEOF", why: "rm is not on the bash_allow list"},
	{command: "echo ${X:=y}", why: "parameter expansion beyond $NAME"},
	{command: "echo ${X:-$(rm x)}", why: "parameter expansion beyond $NAME"},
	{command: "echo $((a[$(rm x)]))", why: "arithmetic expansion"},
	{command: "PATH=/tmp ls", why: "it sets PATH for the command"},
	{command: "LD_PRELOAD=/tmp/x.so ls", why: "it sets LD_PRELOAD"},
	{command: "LC_ALL=$(rm x) ls", why: "rm is not on the bash_allow list"},
	{command: "X=1; ls", why: "it sets shell variables"},
	{command: "export X=1", why: "export sets shell variables"},
	{command: "eval ls", why: "eval runs shell code"},
	{command: "exec ls", why: "exec runs other programs"},
	{command: "source x.sh", why: "source runs shell code"},
	{command: ". x.sh", why: ". runs shell code"},
	{command: "xargs ls", why: "xargs runs other programs"}, // even on the list
	{command: "env ls", why: "env runs other programs"},
	{command: "sudo ls", why: "sudo runs other programs"},
	{command: "nohup ls", why: "nohup runs other programs"},
	{command: "timeout 5 rm x", why: "rm is not on the bash_allow list"},
	{command: "timeout 5 sh -c x", why: "shell option"},
	{command: "ls &", why: "background"},
	{command: "for f in *; do ls $f; done", why: "control flow"},
	{command: "if true; then ls; fi", why: "control flow"},
	{command: "f() { ls; }; f", why: "defines a shell function"},
	{command: "cat$IFS/etc/passwd", why: "the program name \"cat…\" is not a plain word"},
	{command: "l$X -la", why: "is not a plain word"},
	{command: "$(echo rm) x", why: "is not a plain word"},
	{command: "echo 'unterminated", why: "does not parse as bash"},
	{command: "# only a comment", why: "no command"},
	// Where the parser and bash disagree (found by FuzzBashAllow): the
	// parser skips a NUL and reads a backslash before CR LF as a line
	// continuation; bash would run rm.
	{command: "ls \\\x00\nrm -rf x", why: "NUL byte"},
	{command: "find 0\\\r\nrm -rf x", why: "carriage return"},

	// Entries match word by word.
	{command: "go testfoo", why: "no bash_allow entry covers this go command (the list has go test)", allow: []string{"go test"}},
	{command: "go test -v ./...", allow: []string{"go test"}},
	{command: "head -c 5 f", why: "no bash_allow entry covers this head command (the list has head -n)"},
	{command: "wc -c f", why: "no bash_allow entry covers"},
	{command: "echoes", why: "echoes is not on the bash_allow list"},
	{command: "find . -delete", allow: []string{"find . -delete"}}, // the user's choice
	{command: "find . -delete -exec rm {} +", why: "find -exec", allow: []string{"find . -delete"}},
	{command: "sed -i s/a/b/ f", allow: []string{"sed -i"}},
	{command: "sed -i 'w /tmp/x' f", why: "sed w writes", allow: []string{"sed -i"}},
}

func TestBashAllowlist(t *testing.T) {
	root := workspace(t, map[string]string{"sub/a.go": "package a"})
	sets := map[string]*Set{}
	for _, tt := range bashCases {
		allow := tt.allow
		if allow == nil {
			allow = testAllow
		}
		key := strings.Join(allow, "\x00")
		if sets[key] == nil {
			sets[key] = newSet(t, root, Config{BashAllow: allow})
		}
		got := sets[key].allowlist().check(tt.command)
		if tt.why == "" && got != "" || tt.why != "" && !strings.Contains(got, tt.why) {
			t.Errorf("check(%q) = %q, want %q", tt.command, got, tt.why)
		}
	}
	if n := len(bashCases); n < 60 {
		t.Errorf("%d cases, want at least 60", n)
	}
}

// TestBashAllowAsksWithReason: a command that an entry names but its
// rule refuses is not run; the user is asked, and told why.
func TestBashAllowAsksWithReason(t *testing.T) {
	root := workspace(t, map[string]string{"f.txt": "x"})
	var asked, why []string
	s := newSet(t, root, Config{BashAllow: []string{"find"}, Ask: func(_ context.Context, q Question) Answer {
		asked, why = append(asked, q.Subject), append(why, q.Why)
		return Deny
	}})
	outside := filepath.Join(t.TempDir(), "y")
	for _, command := range []string{
		"find . -exec touch ran {} +",
		"find f.txt -fprint " + outside,
	} {
		res := call(t, s, "bash", map[string]any{"command": command})
		if !res.Error || !strings.Contains(res.Content, "the user declined") {
			t.Errorf("bash(%q) = %q, want it declined", command, res.Content)
		}
	}
	if exists(filepath.Join(root, "ran")) || exists(outside) {
		t.Errorf("a declined find ran")
	}
	want := []string{"find -exec runs programs", "find -fprint writes a file"}
	if len(why) != 2 || why[0] != want[0] || why[1] != want[1] {
		t.Errorf("the user was asked %q with reasons %q, want %q", asked, why, want)
	}
	// An allowed find runs without asking.
	asked = nil
	if res := call(t, s, "bash", map[string]any{"command": "find . -name f.txt"}); res.Content != "./f.txt\n[exit status 0]" || asked != nil {
		t.Errorf("bash(find -name) = %q, asked %q", res.Content, asked)
	}
}

// FuzzBashAllow: the decision never fails; an allowed command stays
// allowed with whitespace before it, and stops being allowed when a
// command off the list follows it.
func FuzzBashAllow(f *testing.F) {
	for _, tt := range bashCases {
		f.Add(tt.command)
	}
	l := newAllowlist(testAllow, func(p string) bool {
		return within("/ws", filepath.Join("/ws", p)) || filepath.IsAbs(p) && within("/ws", filepath.Clean(p))
	})
	f.Fuzz(func(t *testing.T, command string) {
		why := l.check(command)
		if strings.HasPrefix(why, "the command could not be checked") {
			t.Fatalf("check(%q) = %q", command, why)
		}
		if why != "" {
			return
		}
		for _, pre := range []string{" ", "\t", "\n", " \n\t "} {
			if why := l.check(pre + command); why != "" {
				t.Errorf("check(%q) = %q, but %q is allowed", pre+command, why, command)
			}
		}
		if !strings.Contains(command, "#") {
			if l.check(command+" ; rm -rf x") == "" {
				t.Errorf("check(%q) allows rm", command+" ; rm -rf x")
			}
		}
		if !strings.HasSuffix(command, "\\") {
			if l.check(command+"\nrm -rf x") == "" {
				t.Errorf("check(%q) allows rm", command+"\nrm -rf x")
			}
		}
	})
}
