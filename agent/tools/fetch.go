package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/contextwin"
)

// Limits of fetch_url.
const (
	fetchTimeout   = 30 * time.Second
	fetchMax       = 2 << 20
	fetchRedirects = 5
)

type fetchArgs struct {
	URL string `json:"url"`
}

func (s *Set) fetch(ctx context.Context, raw json.RawMessage) Result {
	var a fetchArgs
	if r := decode(FetchTool, raw, &a); r != nil {
		return *r
	}
	raw0 := strings.TrimSpace(a.URL)
	if raw0 == "" {
		return failf(`fetch_url needs "url", an http or https URL such as {"url":"https://go.dev/doc/"}`)
	}
	p := contextwin.Payload{Kind: contextwin.Fetch, Path: raw0}
	u, err := checkURL(raw0)
	if err != nil {
		return Result{Error: true, Payload: p, Content: FetchTool + ": " + err.Error()}
	}
	if r := s.askHost(ctx, u); r != nil {
		r.Payload = p
		return *r
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Result{Error: true, Payload: p, Content: fmt.Sprintf(FetchTool+": %v", err)}
	}
	req.Header.Set("User-Agent", "Reika/1 (coding agent)")
	req.Header.Set("Accept", "text/html,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5")
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Result{Error: true, Payload: p, Content: fmt.Sprintf(FetchTool+": %s could not be fetched: %v", raw0, err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, fetchMax+1))
	if err != nil && len(body) == 0 {
		return Result{Error: true, Payload: p, Content: fmt.Sprintf(FetchTool+": reading %s failed: %v", raw0, err)}
	}
	cut := len(body) > fetchMax
	if cut {
		body = body[:fetchMax]
	}
	ctype := resp.Header.Get("Content-Type")
	if ctype == "" {
		ctype = http.DetectContentType(body)
	}
	media, _, _ := mime.ParseMediaType(ctype)
	var text string
	switch {
	case media == "text/html" || media == "application/xhtml+xml":
		text = htmlToText(string(body), resp.Request.URL)
	case strings.HasPrefix(media, "text/") || isTextMedia(media) || !isBinary(body):
		text = validUTF8(string(body))
	default:
		return Result{Error: true, Payload: p, Content: fmt.Sprintf(FetchTool+": %s is %s, not text; "+FetchTool+" shows text and HTML pages only", raw0, media)}
	}
	var b strings.Builder
	if final := resp.Request.URL.String(); final != u.String() {
		fmt.Fprintf(&b, "[redirected to %s]\n", final)
	}
	if resp.StatusCode >= 400 {
		fmt.Fprintf(&b, FetchTool+": %s answered %s\n%s", raw0, resp.Status, clipWithCount(strings.TrimSpace(text), 2000))
		return Result{Error: true, Payload: p, Content: b.String()}
	}
	if strings.TrimSpace(text) == "" {
		text = "(the page has no text)"
	}
	b.WriteString(text)
	if cut {
		b.WriteString("\n… [the page was cut at 2 MB]")
	}
	return Result{Content: b.String(), Payload: p}
}

// askHost asks the user, once per host and session, before fetch_url
// reaches a host: the question shows the whole URL, which is what leaves
// the machine. It returns nil when the host may be reached.
func (s *Set) askHost(ctx context.Context, u *url.URL) *Result {
	host := strings.ToLower(u.Hostname())
	s.hostsMu.Lock()
	ok := s.hosts[host]
	s.hostsMu.Unlock()
	if ok {
		return nil
	}
	why := fmt.Sprintf("fetch_url has not reached %s in this session; the whole URL, with anything in its path and query, goes to that host", host)
	q := Question{Kind: AskFetch, Subject: u.String(), Why: why, Label: "network", Answers: []Answer{Once, ThisRun}}
	switch s.ask(ctx, q) {
	case Unasked:
		if s.unasked != nil {
			r := failf(FetchTool+": %s was not fetched: reaching a new host needs the user's yes, and %s", u, s.unasked(q))
			return &r
		}
		r := failf(FetchTool+": %s was not fetched: reaching a new host needs the user's yes, and the user cannot be asked here; tell the user the URL instead", u)
		return &r
	case Deny:
		r := failf(FetchTool+": the user declined to fetch %s; do not fetch it or its host again in this session", u)
		return &r
	case ThisRun:
		s.hostsMu.Lock()
		s.hosts[host] = true
		s.hostsMu.Unlock()
	}
	return nil
}

func isTextMedia(m string) bool {
	switch m {
	case "application/json", "application/xml", "application/javascript", "application/x-yaml",
		"application/yaml", "application/toml", "application/x-sh", "application/ld+json", "application/rss+xml", "application/atom+xml":
		return true
	}
	return strings.HasSuffix(m, "+json") || strings.HasSuffix(m, "+xml")
}

// checkURL accepts absolute http and https URLs of public hosts. Names
// are judged as written here; the dialer judges the addresses they
// resolve to.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %v", raw, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return nil, fmt.Errorf("%q has no scheme; give an absolute URL such as https://%s", raw, strings.TrimPrefix(raw, "//"))
	default:
		return nil, fmt.Errorf("only http and https URLs can be fetched, not %s URLs", u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("%q has no host", raw)
	}
	if engine.IsLocalHost(host) {
		return nil, fmt.Errorf("%s is refused: the host %s is on this machine or a private network, and only public hosts can be fetched", raw, host)
	}
	return u, nil
}

// fetchClient builds the client of fetch_url. The default one resolves
// names itself and dials only public addresses, checked again at connect
// time, so that a name cannot resolve to a public address for the check
// and a private one for the connection; it ignores proxy settings, which
// would hide the address. Every redirect is checked like the first URL.
func (s *Set) fetchClient(base *http.Client) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	} else {
		c.Transport = &http.Transport{
			Proxy:                 nil,
			DialContext:           s.dialPublic,
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 20 * time.Second,
			MaxIdleConns:          4,
			IdleConnTimeout:       30 * time.Second,
		}
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= fetchRedirects {
			return fmt.Errorf("more than %d redirects", fetchRedirects)
		}
		if _, err := checkURL(req.URL.String()); err != nil {
			return fmt.Errorf("redirected to a refused URL: %w", err)
		}
		if r := s.askHost(req.Context(), req.URL); r != nil {
			return fmt.Errorf("redirected to %s: %s", req.URL, r.Content)
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &c
}

// dialPublic connects to addr only if every address its host resolves to
// is public.
func (s *Set) dialPublic(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		lookup := s.lookup
		if lookup == nil {
			lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
				return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			}
		}
		if ips, err = lookup(ctx, host); err != nil {
			return nil, err
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	for _, ip := range ips {
		if !publicAddr(ip) {
			return nil, fmt.Errorf("%s resolves to %s, which is on this machine or a private network; only public hosts can be fetched", host, ip)
		}
	}
	d := net.Dialer{Timeout: 10 * time.Second, Control: controlPublic}
	var first error
	for _, ip := range ips {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// controlPublic refuses a connection to an address that is not public,
// just before it is made.
func controlPublic(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refusing to connect to %s", address)
	}
	if !publicAddr(ap.Addr()) {
		return fmt.Errorf("refusing to connect to %s: it is on this machine or a private network", address)
	}
	return nil
}

var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("fec0::/10"),     // site-local
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	netip.MustParsePrefix("100::/64"),      // discard
}

// IPv6 ranges that carry an IPv4 address: an address in one is public
// only when the IPv4 address it reaches is.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")   // NAT64, bytes 12-15
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48") // local-use NAT64, bytes 12-15
	compat     = netip.MustParsePrefix("::/96")          // IPv4-compatible (deprecated), bytes 12-15
	sixToFour  = netip.MustParsePrefix("2002::/16")      // 6to4, bytes 2-5
	teredo     = netip.MustParsePrefix("2001::/32")      // Teredo: the server at bytes 4-7, the client inverted at 12-15
)

// v4At is the IPv4 address in bytes [i, i+4) of an IPv6 address, inverted
// when flip is set.
func v4At(ip netip.Addr, i int, flip bool) netip.Addr {
	b := ip.As16()
	var v [4]byte
	copy(v[:], b[i:i+4])
	if flip {
		for j := range v {
			v[j] ^= 0xff
		}
	}
	return netip.AddrFrom4(v)
}

// publicAddr reports whether ip is a public unicast address.
func publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	switch {
	case ip.Is4():
	case nat64.Contains(ip), nat64Local.Contains(ip):
		return publicAddr(v4At(ip, 12, false))
	case compat.Contains(ip) && !ip.IsLoopback() && !ip.IsUnspecified():
		return publicAddr(v4At(ip, 12, false))
	case sixToFour.Contains(ip):
		return publicAddr(v4At(ip, 2, false))
	case teredo.Contains(ip):
		return publicAddr(v4At(ip, 4, false)) && publicAddr(v4At(ip, 12, true))
	}
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}
