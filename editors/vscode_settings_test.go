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
	t.Helper()
	b, err := os.ReadFile(filepath.Join("vscode", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Contributes struct {
			Configuration struct {
				Properties map[string]struct {
					Type string `json:"type"`
				} `json:"properties"`
			} `json:"configuration"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	out := map[string]string{}
	for k, p := range pkg.Contributes.Configuration.Properties {
		out[k] = p.Type
	}
	return out
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
