package engine

import (
	"net"
	"net/http"
	"time"
)

// defaultTransport dials with a short timeout, so a wrong host or a
// firewalled port fails in seconds, and otherwise leaves time limits to the
// per-call contexts (a long prefill must not be cut by a client-wide
// timeout).
var defaultTransport = &http.Transport{
	// A proxy only from the user's own environment; loopback is never proxied.
	Proxy: http.ProxyFromEnvironment,
	DialContext: (&net.Dialer{
		Timeout:   5 * time.Second,
		KeepAlive: 30 * time.Second,
	}).DialContext,
	TLSHandshakeTimeout:   10 * time.Second,
	MaxIdleConns:          16,
	IdleConnTimeout:       90 * time.Second,
	ExpectContinueTimeout: time.Second,
	ForceAttemptHTTP2:     true,
}

// httpClient returns the client every request goes through.
func (o Options) httpClient() *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	return &http.Client{Transport: defaultTransport}
}
