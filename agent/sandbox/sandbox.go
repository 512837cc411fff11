package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrUnavailable is returned by Start when Landlock is not there (another
// system, a kernel without it, or Landlock disabled at boot). Probe says why.
var ErrUnavailable = errors.New("sandbox: landlock is not available")

// A Policy says what a contained command may touch. The zero value hides
// nothing and grants no write; fill in at least Workspace and Temp.
type Policy struct {
	// Workspace holds absolute roots. Each root is readable; its top-level
	// entries are writable except those Protected matches.
	Workspace []string
	// Protected reports whether a top-level entry name of a workspace root
	// (".git", ".vscode", ".envrc"…) is protected: read-only, and since a
	// command cannot create top-level entries, never created. Nil protects
	// nothing.
	Protected func(name string) bool
	// Temp is writable: the system temporary directory, or one given.
	Temp string
	// Home is hidden: neither readable nor writable, except what Caches
	// and Exec grant. Empty hides nothing.
	Home string
	// Caches are the toolchain directories inside Home a build needs.
	Caches []Cache
	// Exec are extra directories that are readable and executable, such as
	// the entries of PATH inside Home (~/go/bin).
	Exec []string
	// Network allows TCP: the user allowed it for this command.
	Network bool
}

// A Cache is a directory (or file) a toolchain keeps in Home.
type Cache struct {
	Path  string
	Write bool   // writable as well as readable
	Tool  string // where the path came from, such as "go env GOCACHE"
	// Version is the toolchain's version, for Go's build cache (go env
	// GOVERSION): Private reads it to choose GOCACHEPROG.
	Version string
}

// Status says whether Landlock is there and which version of it, and
// which of the other layers hold.
type Status struct {
	ABI       int    // Landlock ABI version, 0 when unavailable
	Available bool   // Start can contain commands
	Why       string // why not, when not Available

	// Namespaces is set when each command runs in its own pid and mount
	// namespaces, with its own /proc, and without the network in its own
	// network namespace, under an init that takes everything the command
	// started with it when it ends. NamespacesWhy says why not.
	Namespaces    bool
	NamespacesWhy string
	// UserNamespace is set when the namespaces are made in a user
	// namespace of their own: the server is not root.
	UserNamespace bool
	// Seccomp is set when the socket filter is built for this
	// architecture (amd64 and arm64).
	Seccomp bool
}

// Line describes in one line what Start does with p under s, for a check
// or status report, such as "landlock ABI 7: workspace writable below its
// top level, home hidden, no network".
func (s Status) Line(p Policy) string {
	if !s.Available {
		return "no sandbox: " + s.Why
	}
	parts := []string{"workspace writable below its top level"}
	if p.Home != "" {
		parts = append(parts, "home hidden")
	}
	var off []string
	switch {
	case p.Network:
		parts = append(parts, "network allowed")
	case s.ABI >= 4:
		parts = append(parts, "no network")
	default:
		off = append(off, "no network not enforced (Landlock ABI < 4)")
	}
	if s.ABI < 2 {
		off = append(off, "moves between folders denied (Landlock ABI < 2)")
	}
	if s.ABI < 3 {
		off = append(off, "truncation not controlled (Landlock ABI < 3)")
	}
	if s.ABI < 5 {
		off = append(off, "device ioctls not controlled (Landlock ABI < 5)")
	}
	if s.ABI < 6 {
		off = append(off, "signals and abstract sockets not scoped (Landlock ABI < 6)")
	}
	line := fmt.Sprintf("landlock ABI %d: %s", s.ABI, strings.Join(parts, ", "))
	if len(off) > 0 {
		line += "; " + strings.Join(off, ", ")
	}
	line += "; " + s.layersLine(p.Network)
	for _, c := range p.Caches {
		mode := "read-only"
		if c.Write {
			mode = "writable"
		}
		line += fmt.Sprintf("; %s %s (%s)", c.Path, mode, c.Tool)
	}
	return line
}

// layersLine says which layers besides Landlock hold, or why not and what
// is lost without them.
func (s Status) layersLine(network bool) string {
	var parts []string
	switch {
	case s.Namespaces:
		ns := "own pid, mount and network namespaces"
		if network {
			ns = "own pid and mount namespaces"
		}
		if s.UserNamespace {
			ns += " in a user namespace"
		}
		parts = append(parts, ns+" (nothing a command starts outlives it, /proc shows only its processes)")
	default:
		parts = append(parts, "no namespaces ("+s.NamespacesWhy+"): what a command leaves running is stopped through its process group only, /proc shows the user's other processes")
	}
	if s.Seccomp {
		parts = append(parts, "seccomp socket filter")
	} else {
		parts = append(parts, "no seccomp filter on this architecture (unix, UDP and other sockets not refused)")
	}
	return strings.Join(append(parts, "no capabilities"), "; ")
}

// denials are what a command prints when Landlock stops it, lowercased.
var denials = []string{"permission denied", "operation not permitted"}

// connectFailures are what clients print when a TCP connect is refused,
// lowercased: curl and wget do not always say "permission denied".
var connectFailures = []string{"failed to connect", "couldn't connect", "could not connect", "unable to connect", "connect: "}

// Explain returns a line to append to a failed command's output when the
// output suggests the sandbox stopped it, and "" otherwise. It tells the
// model what the sandbox allows and what to do instead.
func Explain(output string, exitFailed bool, p Policy) string {
	if !exitFailed {
		return ""
	}
	low := strings.ToLower(output)
	hit := slices.ContainsFunc(denials, func(s string) bool { return strings.Contains(low, s) })
	if !hit && !p.Network {
		hit = slices.ContainsFunc(connectFailures, func(s string) bool { return strings.Contains(low, s) })
	}
	if !hit {
		return ""
	}
	var b strings.Builder
	b.WriteString("[sandbox: commands may write below the workspace's top-level folders, to its existing top-level files")
	if p.Temp != "" {
		fmt.Fprintf(&b, " and in %s", p.Temp)
	}
	b.WriteString(", not create or remove entries at the top level of the workspace")
	if names := protectedNames(p); len(names) > 0 {
		fmt.Fprintf(&b, " or change %s", strings.Join(names, ", "))
	}
	b.WriteString(";")
	if p.Home != "" {
		b.WriteString(" your home is hidden;")
	}
	if !p.Network {
		b.WriteString(" there is no network;")
	}
	b.WriteString(" a change there needs the edit or write tool, or the user allowing the command outside the sandbox]")
	return b.String()
}

// protectedNames lists the protected top-level entries of p's workspace
// roots that exist, at most four.
func protectedNames(p Policy) []string {
	if p.Protected == nil {
		return nil
	}
	var names []string
	for _, root := range p.Workspace {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if p.Protected(e.Name()) && !slices.Contains(names, e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	slices.Sort(names)
	if len(names) > 4 {
		names = append(names[:4], "…")
	}
	return names
}

// within reports whether path is dir or below it; both are clean and
// absolute.
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}
