package lsp

import (
	"encoding/json"
	"path"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

func TestURIRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		path string
		uri  string
	}{
		{"/", "file:///"},
		{"/home/me/w/main.go", "file:///home/me/w/main.go"},
		{"/tmp/a b#c%.go", "file:///tmp/a%20b%23c%25.go"},
		{"/tmp/q?x=1", "file:///tmp/q%3Fx=1"},
		{"/tmp/%41", "file:///tmp/%2541"},
		{"/tmp/ü/日本.go", "file:///tmp/%C3%BC/%E6%97%A5%E6%9C%AC.go"},
		{"/tmp/a+b;c=d@e:f,g!$&'()*~", "file:///tmp/a+b;c=d@e:f,g!$&'()*~"},
		{"/tmp/[x]{y}<z>|^`\"\\", "file:///tmp/%5Bx%5D%7By%7D%3Cz%3E%7C%5E%60%22%5C"},
		{"/tmp/new\nline\t", "file:///tmp/new%0Aline%09"},
		{"/tmp/\xff", "file:///tmp/%FF"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			if got := PathToURI(tc.path); got != protocol.DocumentURI(tc.uri) {
				t.Errorf("PathToURI(%q) = %q, want %q", tc.path, got, tc.uri)
			}
			if got, err := URIToPath(protocol.DocumentURI(tc.uri)); err != nil || got != tc.path {
				t.Errorf("URIToPath(%q) = %q, %v, want %q", tc.uri, got, err, tc.path)
			}
		})
	}
}

func TestURIToPath(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		want string
	}{
		{"file:///tmp/a%20b.go", "/tmp/a b.go"},
		{"file:///tmp/a b.go", "/tmp/a b.go"}, // not encoded: taken as it is
		{"file:///tmp/%7ea.go", "/tmp/~a.go"},
		{"file:///tmp/%e6%97%a5.go", "/tmp/日.go"},
		{"file:///tmp/日.go", "/tmp/日.go"},
		{"file://localhost/tmp/x.go", "/tmp/x.go"},
		{"FILE:///tmp/x.go", "/tmp/x.go"},
		{"file:/tmp/x.go", "/tmp/x.go"},
		{"file:///tmp/a/../b/./c.go", "/tmp/b/c.go"},
		{"file:///tmp/w/", "/tmp/w"},
		{"file:///tmp/a+b.go", "/tmp/a+b.go"}, // "+" is not a space in a path
	} {
		t.Run(tc.uri, func(t *testing.T) {
			if got, err := URIToPath(protocol.DocumentURI(tc.uri)); err != nil || got != tc.want {
				t.Errorf("URIToPath(%q) = %q, %v, want %q", tc.uri, got, err, tc.want)
			}
		})
	}
}

// Neovim 0.7 escapes "/" as "\/" in JSON; decoding the JSON undoes it
// before the URI is read.
func TestURIToPathNeovimEscapes(t *testing.T) {
	var td protocol.TextDocumentIdentifier
	const payload = `{"uri":"file:\/\/\/home\/me\/w\/a%20b.go"}`
	if err := json.Unmarshal([]byte(payload), &td); err != nil {
		t.Fatal(err)
	}
	if got, err := URIToPath(td.URI); err != nil || got != "/home/me/w/a b.go" {
		t.Errorf("URIToPath(%q) = %q, %v, want %q", td.URI, got, err, "/home/me/w/a b.go")
	}
}

func TestURIToPathErrors(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		want string // in the error
	}{
		{"", "not a file URI"},
		{"untitled:Untitled-1", "not a file URI"},
		{"git:/tmp/x.go?%7B%22path%22%7D", "not a file URI"},
		{"https://example.com/x.go", "not a file URI"},
		{"/tmp/x.go", "not a file URI"},
		{"file://server/share/x.go", `names host "server"`},
		{"file:///tmp/a%zz.go", "malformed file URI"},
		{"file:///tmp/a%2", "malformed file URI"},
		{"file:///tmp/a#b.go", "query or fragment"},
		{"file:///tmp/a?b.go", "query or fragment"},
		{"file:tmp/x.go", "no absolute path"},
		{"file://", "no absolute path"},
		{"file:///tmp/%00x", "NUL"},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			got, err := URIToPath(protocol.DocumentURI(tc.uri))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("URIToPath(%q) = %q, %v, want an error with %q", tc.uri, got, err, tc.want)
			}
		})
	}
}

// Windows spellings, checked on any OS through the functions the exported
// ones call.
func TestURIWindows(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		want string
	}{
		{"file:///c%3A/Users/me/a%20b.go", `C:\Users\me\a b.go`}, // VS Code
		{"file:///C:/Users/me/x.go", `C:\Users\me\x.go`},         // Neovim
		{"file:///d:/", `D:\`},
		{"file:///C:", `C:\`},
		{"file:///C:/a/../../b", `C:\b`},
		{"file://server/share/x.go", `\\server\share\x.go`},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			if got, err := uriToPath(tc.uri, true); err != nil || got != tc.want {
				t.Errorf("uriToPath(%q, windows) = %q, %v, want %q", tc.uri, got, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		path string
		want string
	}{
		{`C:\Users\me\a b#.go`, "file:///C:/Users/me/a%20b%23.go"},
		{`c:\x`, "file:///C:/x"},
		{`\\server\share\x.go`, "file://server/share/x.go"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got := pathToURI(tc.path, true)
			if got != tc.want {
				t.Errorf("pathToURI(%q, windows) = %q, want %q", tc.path, got, tc.want)
			}
			if back, err := uriToPath(got, true); err != nil || !strings.EqualFold(back, tc.path) {
				t.Errorf("uriToPath(%q, windows) = %q, %v, want %q", got, back, err, tc.path)
			}
		})
	}
	if got, err := uriToPath("file:///tmp/x.go", true); err == nil {
		t.Errorf("uriToPath(%q, windows) = %q, want an error: no drive", "file:///tmp/x.go", got)
	}
}

// FuzzURIRoundTrip: any clean absolute path without NUL comes back from
// its URI unchanged, and the URI holds only characters RFC 3986 allows.
func FuzzURIRoundTrip(f *testing.F) {
	for _, seed := range []string{"a b#c%.go", "ü/日本", "%41", "a?b", "x/../y", "\xff\x00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if strings.ContainsRune(name, 0) {
			return
		}
		p := path.Clean("/" + name)
		uri := pathToURI(p, false)
		for i := 0; i < len(uri); i++ {
			if c := uri[i]; c != '%' && !isPathChar(c) {
				t.Fatalf("pathToURI(%q) = %q, which holds %q", p, uri, c)
			}
		}
		if back, err := uriToPath(uri, false); err != nil || back != p {
			t.Fatalf("uriToPath(pathToURI(%q)) = %q, %v, want %q", p, back, err, p)
		}
	})
}
