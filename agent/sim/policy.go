package sim

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// policy is the built-in "model": it explores a directory with the tools a
// request offers, the way a coding agent's model would, and finishes with a
// final answer after a number of rounds. It never writes new files; its
// edits insert a one-line comment above a declaration it has read, with
// old_text copied from the read result so that the edit applies.
//
// Tools are recognised by name, with these arguments:
//
//	read  {"path", "offset" (1-based line, optional), "limit" (lines, optional)}
//	glob  {"pattern"}
//	grep  {"pattern", "path" (optional directory or file)}
//	edit  {"path", "old_text", "new_text"}
//	write {"path", "content"}
//	bash  {"command"}
//
// Every choice is derived from the conversation (a hash of the first user
// message and the round number), so the same conversation gets the same
// reply. The round number is read back from the ids of earlier tool calls
// ("call_…_r12_0"), which survive a fold that keeps recent turns.
type policy struct {
	root   string
	rounds int

	once  sync.Once
	files []fileEntry
}

type fileEntry struct {
	path string // slash-separated, relative to the root
	size int64
}

// Limits of the directory walk.
const (
	maxPolicyFiles = 20000
	maxFileSize    = 256 << 10
)

// skipDirs are dependency and build directories an agent leaves alone.
var skipDirs = map[string]bool{
	"node_modules": true, "vendor": true, "target": true, "dist": true, "build": true,
	"__pycache__": true, "venv": true,
}

func newPolicy(root string, rounds int) *policy {
	return &policy{root: root, rounds: rounds}
}

// listing walks the root once: text files under maxFileSize, skipping
// hidden and dependency directories.
func (p *policy) listing() []fileEntry {
	p.once.Do(func() {
		// The walk never fails: unreadable entries are skipped.
		_ = filepath.WalkDir(p.root, func(full string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable entries are skipped, not fatal
			}
			name := d.Name()
			if d.IsDir() {
				if full != p.root && (strings.HasPrefix(name, ".") || skipDirs[name]) {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasPrefix(name, ".") || !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil || info.Size() == 0 || info.Size() > maxFileSize {
				return nil
			}
			if !isText(full) {
				return nil
			}
			rel, err := filepath.Rel(p.root, full)
			if err != nil {
				return nil
			}
			p.files = append(p.files, fileEntry{path: filepath.ToSlash(rel), size: info.Size()})
			if len(p.files) >= maxPolicyFiles {
				return filepath.SkipAll
			}
			return nil
		})
	})
	return p.files
}

// isText reports whether a file's head holds no NUL and is valid UTF-8.
func isText(full string) bool {
	f, err := os.Open(full)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, _ := f.Read(buf)
	buf = buf[:n]
	if bytes.IndexByte(buf, 0) >= 0 {
		return false
	}
	// A multi-byte rune may be cut at the end of the buffer.
	for i := 0; i < 3 && len(buf) > 0 && !utf8.Valid(buf); i++ {
		buf = buf[:len(buf)-1]
	}
	return utf8.Valid(buf)
}

func (p *policy) readFile(rel string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(p.root, filepath.FromSlash(rel)))
	if err != nil || len(data) > maxFileSize {
		return "", false
	}
	return string(data), true
}

// action is one planned tool call and why.
type action struct {
	call toolCall
	why  string
}

// reply answers c: a tool round, a note when tools are forbidden, or the
// final answer once the rounds are spent.
func (p *policy) reply(c *chat) reply {
	k := learn(c)
	if !c.toolsAllowed() {
		return reply{Content: k.note(), Source: "note"}
	}
	target := p.rounds
	if k.directive > 0 {
		target = k.directive
	}
	round := k.rounds + 1
	if round > target {
		return reply{Content: k.final(), Source: "final"}
	}
	seed := conversationSeed(c)
	rng := rand.New(rand.NewPCG(seed, uint64(round)))
	offered := func(name string) bool {
		if strings.HasPrefix(c.toolChoice, "function:") {
			return strings.EqualFold(strings.TrimPrefix(c.toolChoice, "function:"), name)
		}
		return c.offers(name)
	}
	first, ok := p.plan(k, round, target, rng, offered, nil)
	if !ok {
		return reply{Content: k.final(), Source: "final"}
	}
	acts := []action{first}
	if c.req.ParallelToolCalls != nil && *c.req.ParallelToolCalls && rng.Float64() < 0.3 {
		if second, ok := p.plan(k, round, target, rng, offered, &first); ok && second.call.Arguments != first.call.Arguments {
			acts = append(acts, second)
		}
	}
	r := reply{Source: "policy"}
	var whys []string
	for i, a := range acts {
		a.call.ID = callID(seed, round, i)
		r.ToolCalls = append(r.ToolCalls, a.call)
		whys = append(whys, a.why)
	}
	r.Reasoning = fmt.Sprintf("Round %d of %d. The task is %q. So far I have read %d files, run %d searches and made %d edits. Next I will %s.",
		round, target, excerpt(k.task, 100), len(k.readPaths()), len(k.greps), len(k.edits), strings.Join(whys, ", and "))
	return r
}

// plan picks one action for this round. not, when set, is an action
// already planned for the round, which a second pick avoids repeating.
func (p *policy) plan(k *knowledge, round, target int, rng *rand.Rand, offered func(string) bool, not *action) (action, bool) {
	files := p.listing()
	type option struct {
		weight float64
		make   func() (action, bool)
	}
	var opts []option
	add := func(tool string, w float64, f func() (action, bool)) {
		if offered(tool) && w > 0 {
			opts = append(opts, option{w, f})
		}
	}
	if round == 1 && not == nil {
		// Survey first, as an agent does.
		if offered("glob") {
			if a, ok := p.glob(k, files, rng); ok {
				return a, true
			}
		}
		if offered("grep") {
			if w := taskWord(k.task); w != "" {
				return grepAction(w, ""), true
			}
		}
	}
	add("read", 5, func() (action, bool) { return p.readNew(k, files, rng) })
	add("grep", 3, func() (action, bool) { return p.grep(k, rng) })
	add("glob", 1, func() (action, bool) { return p.glob(k, files, rng) })
	add("read", 1, func() (action, bool) { return p.reread(k, rng) })
	if len(k.edits) < max(1, target/8) && not == nil {
		add("edit", 1.5, func() (action, bool) { return p.edit(k, round) })
	}
	add("bash", 0.7, func() (action, bool) { return p.bash(k, files, rng) })
	for len(opts) > 0 {
		total := 0.0
		for _, o := range opts {
			total += o.weight
		}
		x := rng.Float64() * total
		i := 0
		for ; i < len(opts)-1; i++ {
			if x < opts[i].weight {
				break
			}
			x -= opts[i].weight
		}
		if a, ok := opts[i].make(); ok && (not == nil || a.call.Arguments != not.call.Arguments) {
			return a, true
		}
		opts = slices.Delete(opts, i, i+1)
	}
	return action{}, false
}

func makeCall(name string, args obj) toolCall {
	return toolCall{Name: name, Arguments: string(mustEncode(args))}
}

// readNew reads a file not read yet, preferring files that earlier results
// mentioned.
func (p *policy) readNew(k *knowledge, files []fileEntry, rng *rand.Rand) (action, bool) {
	known := make(map[string]fileEntry, len(files))
	for _, f := range files {
		known[f.path] = f
	}
	var mentioned []fileEntry
	for _, ph := range k.paths {
		if f, ok := known[ph]; ok && k.readCount[ph] == 0 {
			mentioned = append(mentioned, f)
		}
	}
	var pick fileEntry
	why := ""
	switch {
	case len(mentioned) > 0 && rng.Float64() < 0.8:
		// The most recently mentioned files are the most relevant.
		from := max(0, len(mentioned)-4)
		pick = mentioned[from+rng.IntN(len(mentioned)-from)]
		why = "read " + pick.path + ", which came up in the results"
	default:
		var unread []fileEntry
		for _, f := range files {
			if k.readCount[f.path] == 0 {
				unread = append(unread, f)
			}
		}
		if len(unread) == 0 {
			return action{}, false
		}
		pick = unread[rng.IntN(len(unread))]
		why = "read " + pick.path + " to see what it holds"
	}
	args := obj{{"path", pick.path}}
	if pick.size > 24<<10 && rng.Float64() < 0.5 {
		args = append(args, kv{"offset", 1}, kv{"limit", 200})
		why += " (its first 200 lines)"
	}
	return action{makeCall("read", args), why}, true
}

// reread reads again part of a file read before.
func (p *policy) reread(k *knowledge, rng *rand.Rand) (action, bool) {
	reads := k.readPaths()
	if len(reads) == 0 {
		return action{}, false
	}
	ph := reads[rng.IntN(len(reads))]
	text, ok := p.readFile(ph)
	if !ok {
		return action{makeCall("read", obj{{"path", ph}}), "read " + ph + " again"}, true
	}
	lines := strings.Count(text, "\n") + 1
	if lines <= 60 || rng.Float64() < 0.3 {
		return action{makeCall("read", obj{{"path", ph}}), "read " + ph + " again, it may have changed"}, true
	}
	limit := 20 + rng.IntN(60)
	offset := 1 + rng.IntN(max(1, lines-limit))
	return action{makeCall("read", obj{{"path", ph}, {"offset", offset}, {"limit", limit}}),
		fmt.Sprintf("look again at lines %d-%d of %s", offset, offset+limit-1, ph)}, true
}

func grepAction(pattern, dir string) action {
	args := obj{{"pattern", pattern}}
	why := "search for " + pattern
	if dir != "" {
		args = append(args, kv{"path", dir})
		why += " in " + dir
	}
	return action{makeCall("grep", args), why}
}

// grep searches for a name seen in recent results.
func (p *policy) grep(k *knowledge, rng *rand.Rand) (action, bool) {
	var fresh []string
	for _, id := range k.idents {
		if !k.done["grep\x00"+id] {
			fresh = append(fresh, id)
		}
	}
	if len(fresh) == 0 {
		return action{}, false
	}
	from := max(0, len(fresh)-30)
	id := fresh[from+rng.IntN(len(fresh)-from)]
	dir := ""
	if reads := k.readPaths(); len(reads) > 0 && rng.Float64() < 0.3 {
		if d := path.Dir(reads[rng.IntN(len(reads))]); d != "." {
			dir = d
		}
	}
	return grepAction(id, dir), true
}

// glob lists files by extension or directory.
func (p *policy) glob(k *knowledge, files []fileEntry, rng *rand.Rand) (action, bool) {
	counts := map[string]int{}
	dirs := map[string]bool{}
	for _, f := range files {
		if ext := path.Ext(f.path); ext != "" {
			counts[ext]++
		}
		if i := strings.IndexByte(f.path, '/'); i > 0 {
			dirs[f.path[:i]] = true
		}
	}
	exts := make([]string, 0, len(counts))
	for e := range counts {
		exts = append(exts, e)
	}
	sort.Slice(exts, func(i, j int) bool {
		if counts[exts[i]] != counts[exts[j]] {
			return counts[exts[i]] > counts[exts[j]]
		}
		return exts[i] < exts[j]
	})
	var patterns []string
	for _, e := range exts {
		patterns = append(patterns, "**/*"+e)
	}
	dirNames := make([]string, 0, len(dirs))
	for d := range dirs {
		dirNames = append(dirNames, d)
	}
	sort.Strings(dirNames)
	for _, d := range dirNames {
		patterns = append(patterns, d+"/**")
	}
	var fresh []string
	for _, pt := range patterns {
		if !k.done["glob\x00"+pt] {
			fresh = append(fresh, pt)
		}
	}
	if len(fresh) == 0 {
		return action{}, false
	}
	pt := fresh[0]
	if k.rounds > 0 {
		pt = fresh[rng.IntN(min(len(fresh), 6))]
	}
	return action{makeCall("glob", obj{{"pattern", pt}}), "list the files matching " + pt}, true
}

// bash runs a harmless, read-only command.
func (p *policy) bash(k *knowledge, files []fileEntry, rng *rand.Rand) (action, bool) {
	var cmds []string
	if reads := k.readPaths(); len(reads) > 0 {
		ph := reads[rng.IntN(len(reads))]
		cmds = append(cmds, "wc -l "+shellQuote(ph))
		if d := path.Dir(ph); d != "." {
			cmds = append(cmds, "ls -la "+shellQuote(d))
		}
	}
	cmds = append(cmds, "ls -la")
	if _, err := os.Stat(filepath.Join(p.root, ".git")); err == nil {
		cmds = append(cmds, "git log --oneline -5")
	}
	if len(files) > 0 {
		cmds = append(cmds, "head -n 20 "+shellQuote(files[rng.IntN(len(files))].path))
	}
	for _, c := range cmds {
		if !k.done["bash\x00"+c] {
			return action{makeCall("bash", obj{{"command", c}}), "run " + c}, true
		}
	}
	return action{}, false
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var (
	declLineRe = regexp.MustCompile(`^\s*(?:export\s+|pub\s+|async\s+)*(?:func|type|def|class|fn|struct|impl|interface|trait|enum|function)\s+\S`)
	lineNumRe  = regexp.MustCompile(`^\s*\d+(?:\t|: |\| |→|:\t)`)
)

// edit inserts a comment line above a declaration the conversation read.
// old_text is that declaration's line, copied from the read result and
// unique in it, so the edit applies to the text the agent holds.
func (p *policy) edit(k *knowledge, round int) (action, bool) {
	for i := len(k.reads) - 1; i >= 0 && i >= len(k.reads)-12; i-- {
		r := k.reads[i]
		marker := commentMarker(r.path)
		if r.result == "" || marker == "" {
			continue
		}
		text := stripLineNumbers(r.result)
		disk, onDisk := p.readFile(r.path)
		lines := strings.Split(text, "\n")
		for j, line := range lines {
			line = strings.TrimRight(line, "\r")
			if !declLineRe.MatchString(line) || k.done["edit\x00"+r.path+"\x00"+line] {
				continue
			}
			if j > 0 && strings.Contains(lines[j-1], "reika-sim:") {
				continue
			}
			// Unique in what was read, and on disk when the file is there:
			// a line the disk lacks means the result was not the file's text.
			if strings.Count(text, line) != 1 || (onDisk && strings.Count(disk, line) != 1) {
				continue
			}
			indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
			newText := fmt.Sprintf("%s%s reika-sim: reviewed in round %d\n%s", indent, marker, round, line)
			args := obj{{"path", r.path}, {"old_text", line}, {"new_text", newText}}
			return action{makeCall("edit", args), "mark the declaration " + strings.TrimSpace(line) + " in " + r.path + " as reviewed"}, true
		}
	}
	return action{}, false
}

// stripLineNumbers removes "  12\t" style prefixes when most lines of a
// read result carry them.
func stripLineNumbers(text string) string {
	lines := strings.Split(text, "\n")
	nonEmpty, numbered := 0, 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		nonEmpty++
		if lineNumRe.MatchString(l) {
			numbered++
		}
	}
	if nonEmpty == 0 || numbered*10 < nonEmpty*6 {
		return text
	}
	for i, l := range lines {
		if loc := lineNumRe.FindStringIndex(l); loc != nil {
			lines[i] = l[loc[1]:]
		}
	}
	return strings.Join(lines, "\n")
}

func commentMarker(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".go", ".js", ".jsx", ".ts", ".tsx", ".rs", ".c", ".h", ".cc", ".cpp", ".hpp",
		".java", ".kt", ".swift", ".cs", ".scala", ".dart", ".zig":
		return "//"
	case ".py", ".sh", ".bash", ".rb", ".pl", ".r", ".toml", ".yaml", ".yml":
		return "#"
	case ".lua", ".sql", ".hs":
		return "--"
	}
	return ""
}

// taskWord picks the most identifier-like word of the task to grep for.
func taskWord(task string) string {
	best, bestIdent := "", false
	for _, w := range identRe.FindAllString(task, -1) {
		if keywords[w] {
			continue
		}
		ident := looksLikeIdentifier(w)
		if (ident && !bestIdent) || (ident == bestIdent && len(w) > len(best)) {
			best, bestIdent = w, ident
		}
	}
	return best
}
