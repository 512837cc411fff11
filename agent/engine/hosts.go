package engine

import (
	"net/netip"
	"net/url"
	"strings"
)

// IsLocalHost reports whether host (a name or an address, with or without
// a port) is on this machine or a private network: loopback, the private
// and link-local ranges, carrier-grade NAT (Tailscale and the like),
// unique-local IPv6, "localhost", single-label names and the .local,
// .lan, .internal and .home.arpa domains. Such a host is never looked up
// in the catalog, and nothing about it is sent anywhere else. The decision
// is made from the text alone: no name is resolved.
func IsLocalHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(stripPort(host), "."))
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if h == "" {
		return true
	}
	if i := strings.IndexByte(h, '%'); i >= 0 { // zone of a link-local address
		h = h[:i]
	}
	if a, err := netip.ParseAddr(h); err == nil {
		a = a.Unmap()
		return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified() ||
			cgnat.Contains(a)
	}
	if h == "localhost" || !strings.Contains(h, ".") {
		return true
	}
	for _, suffix := range []string{".localhost", ".local", ".lan", ".internal", ".home.arpa", ".localdomain"} {
		if strings.HasSuffix(h, suffix) {
			return true
		}
	}
	return false
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

func stripPort(host string) string {
	if strings.HasPrefix(host, "[") {
		if i := strings.IndexByte(host, ']'); i >= 0 {
			return host[:i+1]
		}
		return host
	}
	if strings.Count(host, ":") == 1 {
		return host[:strings.IndexByte(host, ':')]
	}
	return host
}

// hostOf returns the host of a URL, or "" if it does not parse.
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// rootOf returns the server root of an OpenAI-compatible base URL: the URL
// without its trailing /v1, where engine-specific paths (/props, /api/ps)
// live.
func rootOf(base string) string {
	base = strings.TrimRight(base, "/")
	return strings.TrimSuffix(base, "/v1")
}
