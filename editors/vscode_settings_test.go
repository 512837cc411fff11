package editors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/config"
)

// vscodeSettings are the settings editors/vscode/package.json declares,
// with their JSON schema types.
func vscodeSettings(t *testing.T) map[string]string {
	out := map[string]string{}
	for k, p := range vscodeProperties(t) {
		out[k] = p.Type
	}
	return out
}

// vscodeProperty is one setting package.json declares.
type vscodeProperty struct {
	Type  string `json:"type"`
	Scope string `json:"scope"`
}

func vscodeProperties(t *testing.T) map[string]vscodeProperty {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("vscode", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Contributes struct {
			Configuration struct {
				Properties map[string]vscodeProperty `json:"properties"`
			} `json:"configuration"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	return pkg.Contributes.Configuration.Properties
}

// TestVSCodeTrustSettings: the settings that widen trust
// (config.TrustKeys) and reika.serverPath, the program that runs, are
// machine-scoped (user settings, never a workspace's .vscode/settings.json,
// not synced to other machines), and settings.ts reads them from the
// user's settings only; no other setting is.
func TestVSCodeTrustSettings(t *testing.T) {
	want := []string{"reika.serverPath"}
	for _, k := range config.TrustKeys {
		want = append(want, "reika."+camelCase(k))
	}
	for k, p := range vscodeProperties(t) {
		if slices.Contains(want, k) {
			if p.Scope != "machine" {
				t.Errorf("package.json: %s has scope %q, want \"machine\": it widens trust, and a workspace may not set it", k, p.Scope)
			}
		} else if p.Scope != "" {
			t.Errorf("package.json: %s has scope %q; only the settings that widen trust have one", k, p.Scope)
		}
	}
	for _, k := range want {
		if _, ok := vscodeProperties(t)[k]; !ok {
			t.Errorf("package.json does not declare %s", k)
		}
	}

	b, err := os.ReadFile(filepath.Join("vscode", "src", "settings.ts"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)export const userOnlySettings = \[(.*?)\];`).FindSubmatch(b)
	if m == nil {
		t.Fatal("settings.ts has no userOnlySettings list")
	}
	var userOnly []string
	for _, q := range regexp.MustCompile(`"(\w+)"`).FindAllSubmatch(m[1], -1) {
		userOnly = append(userOnly, "reika."+string(q[1]))
	}
	slices.Sort(userOnly)
	slices.Sort(want)
	if !slices.Equal(userOnly, want) {
		t.Errorf("settings.ts reads %q from the user's settings only, want %q", userOnly, want)
	}
}

// TestVSCodeSettings checks that the extension declares and sends every
// setting of the config file (config.Profile, and the profile), camelCase,
// with the right type; a setting added to the server and forgotten here
// fails it.
func TestVSCodeSettings(t *testing.T) {
	declared := vscodeSettings(t)
	want := map[string]string{"reika.profile": "string", "reika.serverPath": "string"}
	typ := reflect.TypeOf(config.Profile{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		kind := f.Type.Kind()
		if kind == reflect.Pointer {
			kind = f.Type.Elem().Kind()
		}
		want["reika."+camelCase(name)] = map[reflect.Kind]string{
			reflect.String: "string", reflect.Int: "integer", reflect.Bool: "boolean",
			reflect.Slice: "array", reflect.Map: "object",
		}[kind]
	}
	for k, ty := range want {
		if got, ok := declared[k]; !ok {
			t.Errorf("package.json does not declare %s", k)
		} else if got != ty {
			t.Errorf("package.json: %s is of type %q, want %q", k, got, ty)
		}
	}
	for k := range declared {
		if _, ok := want[k]; !ok {
			t.Errorf("package.json declares %s, which the server does not read", k)
		}
	}

	// settings.ts sends them all but serverPath, the client's own.
	b, err := os.ReadFile(filepath.Join("vscode", "src", "settings.ts"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)export const serverSettings = \[(.*?)\];`).FindSubmatch(b)
	if m == nil {
		t.Fatal("settings.ts has no serverSettings list")
	}
	var sent []string
	for _, q := range regexp.MustCompile(`"(\w+)"`).FindAllSubmatch(m[1], -1) {
		sent = append(sent, "reika."+string(q[1]))
	}
	var wantSent []string
	for k := range want {
		if k != "reika.serverPath" {
			wantSent = append(wantSent, k)
		}
	}
	slices.Sort(sent)
	slices.Sort(wantSent)
	if !slices.Equal(sent, wantSent) {
		t.Errorf("settings.ts sends %q, want %q", sent, wantSent)
	}

	// The README's settings are JSON the extension declares.
	var readme map[string]any
	if err := json.Unmarshal([]byte(snippet(t, "vscode-settings")), &readme); err != nil {
		t.Fatalf("README's vscode-settings: %v", err)
	}
	for k := range readme {
		if _, ok := declared[k]; !ok {
			t.Errorf("README's vscode-settings sets %s, which the extension does not declare", k)
		}
	}
}

func camelCase(snake string) string {
	parts := strings.Split(snake, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}
