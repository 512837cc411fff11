package lsp

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"go.lsp.dev/protocol"
)

// URIToPath returns the absolute, cleaned OS path that a file URI names:
// "file:///home/me/a%20b.go" → "/home/me/a b.go". Percent escapes are
// decoded (a "\/" in the client's JSON is already "/" by now); the host
// may be empty or "localhost" (on Windows another host names a UNC share,
// and "file:///c%3A/x" is C:\x). Any other scheme (untitled:, git:), a
// bad escape, a raw "?" or "#" (which would cut the path short: clients
// encode them), a NUL or a relative path is an error.
func URIToPath(uri protocol.DocumentURI) (string, error) {
	return uriToPath(string(uri), runtime.GOOS == "windows")
}

// PathToURI returns the file URI of the absolute path abs (a relative one
// is made absolute against the working directory), percent-encoding what
// RFC 3986 does not allow in a path: "/a b#c%.go" →
// "file:///a%20b%23c%25.go". URIToPath reverses it.
func PathToURI(abs string) protocol.DocumentURI {
	if a, err := filepath.Abs(abs); err == nil {
		abs = a
	}
	return protocol.DocumentURI(pathToURI(abs, runtime.GOOS == "windows"))
}

func uriToPath(uri string, windows bool) (string, error) {
	const scheme = "file:"
	if len(uri) < len(scheme) || !strings.EqualFold(uri[:len(scheme)], scheme) {
		return "", fmt.Errorf("not a file URI: %q", uri)
	}
	rest := uri[len(scheme):]
	if strings.ContainsAny(rest, "?#") {
		return "", fmt.Errorf("malformed file URI %q: a query or fragment (\"?\" and \"#\" in a path must be percent-encoded)", uri)
	}
	var host string
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			i = len(rest)
		}
		host, rest = rest[:i], rest[i:]
	}
	if !strings.HasPrefix(rest, "/") {
		return "", fmt.Errorf("malformed file URI %q: no absolute path", uri)
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("malformed file URI %q: %w", uri, err)
	}
	if host, err = url.PathUnescape(host); err != nil {
		return "", fmt.Errorf("malformed file URI %q: %w", uri, err)
	}
	if strings.ContainsRune(p, 0) || strings.ContainsRune(host, 0) {
		return "", fmt.Errorf("malformed file URI %q: a NUL byte", uri)
	}
	if strings.EqualFold(host, "localhost") {
		host = ""
	}
	if !windows {
		if host != "" {
			return "", fmt.Errorf("file URI %q names host %q: only local files are supported", uri, host)
		}
		return path.Clean(p), nil
	}
	backslashed := func(p string) string { return strings.ReplaceAll(path.Clean(p), "/", `\`) }
	switch {
	case host != "":
		return `\\` + host + backslashed(p), nil
	case isDrive(p[1:]):
		// "/c:/x" → "C:\x": one spelling of the drive, as gopls does.
		rest := p[3:]
		if rest == "" {
			rest = "/"
		}
		return strings.ToUpper(p[1:2]) + ":" + backslashed(rest), nil
	}
	return "", fmt.Errorf("malformed file URI %q: no drive letter", uri)
}

// isDrive reports whether p starts with a Windows drive, "C:" alone or
// followed by a slash.
func isDrive(p string) bool {
	if len(p) < 2 || p[1] != ':' || (len(p) > 2 && p[2] != '/') {
		return false
	}
	c := p[0] | 0x20
	return 'a' <= c && c <= 'z'
}

func pathToURI(abs string, windows bool) string {
	p, host := abs, ""
	if windows {
		p = strings.ReplaceAll(p, `\`, "/")
		switch {
		case strings.HasPrefix(p, "//"): // \\server\share\x
			rest := p[2:]
			i := strings.IndexByte(rest, '/')
			if i < 0 {
				i = len(rest)
			}
			host, p = rest[:i], rest[i:]
			if p == "" {
				p = "/"
			}
		case isDrive(p):
			p = "/" + strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return "file://" + escapePath(host) + escapePath(p)
}

// escapePath percent-encodes every byte that RFC 3986 does not allow
// literally in a path (pchar and "/").
func escapePath(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isPathChar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func isPathChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@/", c) >= 0
}
