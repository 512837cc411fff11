package editors

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/lsp"
)

// The editor plugins spell Reika's command and notification names in one
// file each; these tests fail when such a file drifts from lsp/names.go.

// tsConst matches `export const name = "value";` in a TypeScript file.
var tsConst = regexp.MustCompile(`(?m)^export const (\w+) = "([^"]*)";`)

// tsList matches `export const name = [ a, b, … ];`.
var tsList = regexp.MustCompile(`(?ms)^export const (\w+) = \[(.*?)\];`)

func TestVSCodeNames(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("vscode", "src", "names.ts"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	consts := map[string]string{}
	for _, m := range tsConst.FindAllStringSubmatch(src, -1) {
		consts[m[1]] = m[2]
	}

	// Every command constant names a command the server executes, and
	// every command the server executes has a constant.
	var declared []string
	for name, v := range consts {
		if strings.HasPrefix(name, "cmd") {
			declared = append(declared, v)
			if !slices.Contains(lsp.Commands, v) {
				t.Errorf("names.ts: %s = %q is not in lsp.Commands %q", name, v, lsp.Commands)
			}
		}
	}
	for _, c := range lsp.Commands {
		if !slices.Contains(declared, c) {
			t.Errorf("names.ts has no constant for the command %q", c)
		}
	}

	// The commands list holds them all, in lsp.Commands' order.
	var list []string
	for _, m := range tsList.FindAllStringSubmatch(src, -1) {
		if m[1] != "commands" {
			continue
		}
		for _, id := range strings.Split(m[2], ",") {
			if id = strings.TrimSpace(id); id != "" {
				v, ok := consts[id]
				if !ok {
					t.Errorf("names.ts: commands lists %s, which is not a string constant", id)
				}
				list = append(list, v)
			}
		}
	}
	if !slices.Equal(list, lsp.Commands) {
		t.Errorf("names.ts: commands = %q, want lsp.Commands %q", list, lsp.Commands)
	}

	if got := consts["statusNotification"]; got != lsp.StatusNotification {
		t.Errorf("names.ts: statusNotification = %q, want %q", got, lsp.StatusNotification)
	}

	if got := consts["trustPlan"]; got != lsp.TrustPlan {
		t.Errorf("names.ts: trustPlan = %q, want %q", got, lsp.TrustPlan)
	}

	if got := consts["answersCapability"]; got != lsp.AnswersCapability {
		t.Errorf("names.ts: answersCapability = %q, want %q", got, lsp.AnswersCapability)
	}

	if got := consts["answerNotification"]; got != lsp.AnswerNotification {
		t.Errorf("names.ts: answerNotification = %q, want %q", got, lsp.AnswerNotification)
	}
	if got, want := tsFields(t, src, "AnswerParams"), jsonFields(reflect.TypeOf(lsp.AnswerParams{})); !slices.Equal(got, want) {
		t.Errorf("names.ts: AnswerParams has the fields %q, want %q", got, want)
	}

	// The status bar reads reika/status's fields by these names.
	if got, want := tsFields(t, src, "StatusParams"), jsonFields(reflect.TypeOf(lsp.StatusParams{})); !slices.Equal(got, want) {
		t.Errorf("names.ts: StatusParams has the fields %q, want %q", got, want)
	}
}

// tsFields returns the field names of a TypeScript interface, sorted.
func tsFields(t *testing.T, src, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?ms)^export interface ` + name + ` \{(.*?)^\}`).FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("names.ts has no interface %s", name)
	}
	var fields []string
	for _, f := range regexp.MustCompile(`(?m)^\s*(\w+)\??:`).FindAllStringSubmatch(m[1], -1) {
		fields = append(fields, f[1])
	}
	slices.Sort(fields)
	return fields
}

// jsonFields returns the JSON names of a struct's fields, sorted.
func jsonFields(typ reflect.Type) []string {
	var fields []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	slices.Sort(fields)
	return fields
}
