package synth

import (
	"fmt"
	"math/rand/v2"
	"path"
	"strings"

	"github.com/reika-lsp/reika/agent/replay"
)

// factDraw draws the facts of a shaped session: each of its own key, in a
// random order, their values carrying random numbers so that none is
// found by chance in a result that does not plant it.
type factDraw struct {
	rng      *rand.Rand
	fn, file string
	order    []int
	i        int
}

func newFactDraw(rng *rand.Rand, fn, file string) *factDraw {
	return &factDraw{rng: rng, fn: fn, file: file, order: rng.Perm(len(shapeFacts))}
}

// next draws the next fact; past the last key it numbers keys anew.
func (d *factDraw) next() replay.Fact {
	k := shapeFacts[d.order[d.i%len(d.order)]]
	f := replay.Fact{Key: k.key, Value: k.value(d)}
	if d.i >= len(d.order) {
		f.Key += fmt.Sprint(d.i / len(d.order))
	}
	d.i++
	return f
}

func (d *factDraw) n(lo, span int) int { return lo + d.rng.IntN(span) }

func (d *factDraw) pick(items ...string) string { return items[d.rng.IntN(len(items))] }

// shapeFacts are the keys of the shaped sessions' facts and how each
// value is drawn: 42, more than any session takes.
var shapeFacts = []struct {
	key   string
	value func(d *factDraw) string
}{
	{"ticket", func(d *factDraw) string {
		return fmt.Sprintf("%s-%d", d.pick("PLAT", "CORE", "OPS", "WEB"), d.n(1000, 9000))
	}},
	{"branch", func(d *factDraw) string {
		return fmt.Sprintf("fix/%s-%d", strings.ReplaceAll(d.fn, "_", "-"), d.n(10, 990))
	}},
	{"reviewer", func(d *factDraw) string {
		return "@" + d.pick("hana", "tomas", "priya", "li", "sven", "amara") + "-" + d.pick("okafor", "lindqvist", "rao", "moreau") + fmt.Sprint(d.n(1, 98))
	}},
	{"failing_test", func(d *factDraw) string {
		return fmt.Sprintf("test_%s_%s_%d", d.fn, d.pick("empty", "eof", "large", "nested"), d.n(1, 90))
	}},
	{"assertion", func(d *factDraw) string {
		return fmt.Sprintf("expected %d entries, got %d", d.n(10, 900), d.n(1000, 9000))
	}},
	{"coverage", func(d *factDraw) string {
		return fmt.Sprintf("%s coverage %d.%d%%", path.Base(d.file), d.n(40, 58), d.n(0, 10))
	}},
	{"seed", func(d *factDraw) string { return fmt.Sprintf("--randomly-seed=%d", d.n(100000, 900000)) }},
	{"ci_job", func(d *factDraw) string {
		return fmt.Sprintf("ci/%s #%d", d.pick("linux", "macos", "windows"), d.n(1000, 9000))
	}},
	{"artifact", func(d *factDraw) string {
		return fmt.Sprintf("artifacts/%d/junit-%s.xml", d.n(10000, 90000), d.pick("unit", "e2e", "integ"))
	}},
	{"commit", func(d *factDraw) string { return fmt.Sprintf("first bad commit %07x", d.rng.Uint32()&0xfffffff) }},
	{"owner", func(d *factDraw) string {
		return "@" + d.pick("ada", "kenji", "oluwa", "marta") + fmt.Sprintf("-%d", d.n(100, 900))
	}},
	{"deadline", func(d *factDraw) string {
		return fmt.Sprintf("release %d.%d.0 on %s %d", d.n(2, 8), d.n(0, 30), d.pick("May", "June", "October"), d.n(1, 28))
	}},
	{"merge_window", func(d *factDraw) string {
		return fmt.Sprintf("%s %02d:%02d UTC", d.pick("Monday", "Tuesday", "Thursday"), d.n(6, 14), 15*d.n(0, 4))
	}},
	{"flake_rate", func(d *factDraw) string { return fmt.Sprintf("fails 1 in %d runs", d.n(30, 970)) }},
	{"timeout", func(d *factDraw) string {
		return fmt.Sprintf("--timeout=%d (raised from %d)", d.n(300, 900), d.n(60, 200))
	}},
	{"env", func(d *factDraw) string { return fmt.Sprintf("APP_ENV=staging-%d", d.n(1, 99)) }},
	{"port", func(d *factDraw) string { return fmt.Sprintf("listens on 127.0.0.1:%d", d.n(20000, 40000)) }},
	{"db_url", func(d *factDraw) string {
		return fmt.Sprintf("postgres://ci:%d@db-%d.internal:5432/app", d.n(1000, 9000), d.n(1, 40))
	}},
	{"feature_flag", func(d *factDraw) string {
		return fmt.Sprintf("FF_%s_V%d=on", strings.ToUpper(d.pick("stream", "cache", "parser", "retry")), d.n(2, 9))
	}},
	{"locale", func(d *factDraw) string {
		return d.pick("tr_TR", "de_DE", "ja_JP", "pt_BR") + fmt.Sprintf(".UTF-8 (runner %d)", d.n(1, 90))
	}},
	{"region", func(d *factDraw) string {
		return fmt.Sprintf("%s-%s-%d", d.pick("eu", "us", "ap"), d.pick("west", "central", "south"), d.n(1, 9))
	}},
	{"bucket", func(d *factDraw) string {
		return fmt.Sprintf("s3://ci-cache-%d/%s", d.n(100, 900), d.pick("wheels", "node", "builds"))
	}},
	{"api_version", func(d *factDraw) string { return fmt.Sprintf("api v%d.%d.%d", d.n(1, 5), d.n(0, 40), d.n(0, 20)) }},
	{"max_retries", func(d *factDraw) string { return fmt.Sprintf("retries=%d backoff=%dms", d.n(3, 9), 50*d.n(2, 40)) }},
	{"cache_ttl", func(d *factDraw) string { return fmt.Sprintf("cache TTL %ds", d.n(30, 3600)) }},
	{"memory_limit", func(d *factDraw) string {
		return fmt.Sprintf("memory limit %dMi, OOM at %dMi", 128*d.n(2, 30), d.n(200, 4000))
	}},
	{"runtime", func(d *factDraw) string {
		return fmt.Sprintf("%s on %s", d.pick("python 3.11.2", "node v20.11.1"), d.pick("debian-12", "ubuntu-24.04", "alpine-3.19"))
	}},
	{"package_version", func(d *factDraw) string { return fmt.Sprintf("pinned at %d.%d.%d", d.n(1, 9), d.n(0, 30), d.n(0, 30)) }},
	{"lockfile", func(d *factDraw) string { return fmt.Sprintf("lockfile sha256 %08x", d.rng.Uint32()) }},
	{"image", func(d *factDraw) string {
		return fmt.Sprintf("registry.local/ci/%s:%d", d.pick("py311", "node20"), d.n(100, 900))
	}},
	{"namespace", func(d *factDraw) string { return fmt.Sprintf("k8s namespace ci-%d", d.n(100, 900)) }},
	{"sentry_issue", func(d *factDraw) string { return fmt.Sprintf("SENTRY-%X", d.rng.Uint32()&0xffffff) }},
	{"pr", func(d *factDraw) string { return fmt.Sprintf("PR #%d", d.n(1000, 9000)) }},
	{"rollback_to", func(d *factDraw) string {
		return fmt.Sprintf("rollback target v%d.%d.%d", d.n(1, 9), d.n(0, 30), d.n(0, 30))
	}},
	{"slo", func(d *factDraw) string { return fmt.Sprintf("p99 under %dms at %d rps", d.n(50, 900), 100*d.n(1, 90)) }},
	{"error_code", func(d *factDraw) string { return fmt.Sprintf("E%d", d.n(1000, 9000)) }},
	{"decision", func(d *factDraw) string {
		return fmt.Sprintf("keep %s's signature; add a private helper (review round %d)", d.fn, d.n(2, 7))
	}},
	{"style_rule", func(d *factDraw) string { return fmt.Sprintf("rule %d: failures say got and want", d.n(2, 40)) }},
	{"release_note", func(d *factDraw) string {
		return fmt.Sprintf("%s no longer fails on empty input (#%d)", d.fn, d.n(1000, 9000))
	}},
	{"perf_budget", func(d *factDraw) string {
		return fmt.Sprintf("%s under %d µs at %d KiB", d.fn, d.n(10, 900), d.n(1, 512))
	}},
	{"heap", func(d *factDraw) string {
		return fmt.Sprintf("rss %d MB after %d calls", d.n(100, 900), 1000*d.n(1, 99))
	}},
	{"tz", func(d *factDraw) string {
		return fmt.Sprintf("TZ=%s (offset %d)", d.pick("Asia/Kolkata", "America/St_Johns", "Australia/Eucla"), d.n(1, 12))
	}},
}
