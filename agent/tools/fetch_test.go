package tools

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// server starts a loopback HTTP server that counts its requests.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestFetchRefusesLocalHosts(t *testing.T) {
	srv, hits := server(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("private")) })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	s := newSet(t, t.TempDir(), Config{FetchEnabled: true, Ask: yes})
	// A public name that resolves to loopback: the dialer refuses it.
	s.lookup = func(_ context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	for _, tt := range []struct {
		url, want string
	}{
		{srv.URL, "the host 127.0.0.1 is on this machine or a private network"},
		{"http://localhost:" + strconv.Itoa(port) + "/", "the host localhost is on this machine"},
		{"http://[::1]:" + strconv.Itoa(port) + "/", "the host ::1 is on this machine"},
		{"http://10.1.2.3/", "the host 10.1.2.3 is on this machine"},
		{"http://printer.local/", "the host printer.local is on this machine"},
		{"http://rebind.example.com:" + strconv.Itoa(port) + "/", "rebind.example.com resolves to 127.0.0.1, which is on this machine or a private network"},
		{"file:///etc/passwd", "only http and https URLs can be fetched, not file URLs"},
		{"example.com/page", "has no scheme"},
		{"http:///nohost", "has no host"},
	} {
		res := call(t, s, "fetch_url", map[string]any{"url": tt.url})
		if !res.Error || !strings.Contains(res.Content, tt.want) {
			t.Errorf("fetch_url(%s) = %q, want a refusal containing %q", tt.url, res.Content, tt.want)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times, want never", n)
	}
}

func TestControlPublic(t *testing.T) {
	for _, tt := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:80", false},
		{"[::1]:443", false},
		{"10.0.0.1:80", false},
		{"172.16.5.4:80", false},
		{"192.168.1.1:80", false},
		{"169.254.169.254:80", false}, // cloud metadata
		{"100.100.1.1:80", false},     // carrier-grade NAT
		{"0.0.0.0:80", false},
		{"[::]:80", false},
		{"[fe80::1]:80", false},
		{"[fd00::1]:80", false},
		{"[::ffff:127.0.0.1]:80", false},
		{"[64:ff9b::a00:1]:80", false}, // NAT64 of 10.0.0.1
		{"224.0.0.1:80", false},
		{"93.184.216.34:80", true},
		{"[2606:2800:220:1::1]:443", true},
		{"[64:ff9b::5db8:d822]:80", true},           // NAT64 of a public address
		{"[::127.0.0.1]:80", false},                 // IPv4-compatible loopback
		{"[::a00:1]:80", false},                     // IPv4-compatible 10.0.0.1
		{"[2002:7f00:1::1]:80", false},              // 6to4 of 127.0.0.1
		{"[2002:c0a8:101::1]:80", false},            // 6to4 of 192.168.1.1
		{"[2002:5db8:d822::1]:80", true},            // 6to4 of a public address
		{"[64:ff9b:1::7f00:1]:80", false},           // local-use NAT64 of 127.0.0.1
		{"[2001:0:5db8:d822::80ff:fffe]:80", false}, // Teredo, client 127.0.0.1
		{"[2001:db8::1]:80", false},                 // documentation
		{"not an address", false},
	} {
		if err := controlPublic("tcp", tt.addr, nil); (err == nil) != tt.ok {
			t.Errorf("controlPublic(%s) = %v, want allowed %v", tt.addr, err, tt.ok)
		}
	}
}

// publicSet is a Set whose fetch client reaches srv for every host name,
// as if srv were on the internet.
func publicSet(t *testing.T, srv *httptest.Server, cfg Config) *Set {
	t.Helper()
	addr := srv.Listener.Addr().String()
	cfg.FetchEnabled = true
	if cfg.Ask == nil {
		cfg.Ask = yes
	}
	cfg.HTTPClient = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}}
	return newSet(t, t.TempDir(), cfg)
}

func TestFetch(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>Docs &amp; more</title><style>body{color:red}</style>
<script>var x = "<p>not text</p>";</script></head>
<body><h1>Getting   started</h1><!-- a comment -->
<p>Install with <code>go install</code>. See the <a href="/ref">reference</a> or <a href="#top">top</a>.</p>
<ul><li>one</li><li>two</li></ul><pre>  keep
    this</pre><img src="x.png" alt="diagram"></body></html>`
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(page))
		case "/data.json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"a":1}`))
		case "/image.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte(strings.Repeat("all work and no play\n", fetchMax/20+100)))
		case "/moved":
			http.Redirect(w, r, "http://docs.example.com/data.json", http.StatusFound)
		case "/sneaky":
			http.Redirect(w, r, "http://127.0.0.1:9/admin", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	})
	spill := t.TempDir()
	s := publicSet(t, srv, Config{SpillDir: spill})
	wantPage := "Docs & more\n\n# Getting started\n\nInstall with go install. See the reference [http://docs.example.com/ref] or top.\n\n- one\n- two\n\n  keep\n    this\n\n[image: diagram]"
	tests := []struct {
		url, want string
		err       bool
	}{
		{url: "http://docs.example.com/page", want: wantPage},
		{url: "https://docs.example.com/data.json", err: true, want: "could not be fetched"}, // the test server speaks plain HTTP
		{url: "http://docs.example.com/data.json", want: `{"a":1}`},
		{url: "http://docs.example.com/image.png", err: true, want: "fetch_url: http://docs.example.com/image.png is image/png, not text; fetch_url shows text and HTML pages only"},
		{url: "http://docs.example.com/nope", err: true, want: "fetch_url: http://docs.example.com/nope answered 404 Not Found\n404 page not found"},
		{url: "http://docs.example.com/moved", want: "[redirected to http://docs.example.com/data.json]\n{\"a\":1}"},
		{url: "http://docs.example.com/sneaky", err: true, want: "redirected to a refused URL: http://127.0.0.1:9/admin is refused"},
		{url: "http://docs.example.com/loop", err: true, want: "more than 5 redirects"},
	}
	for _, tt := range tests {
		res := call(t, s, "fetch_url", map[string]any{"url": tt.url})
		if res.Error != tt.err || !strings.Contains(res.Content, tt.want) {
			t.Errorf("fetch_url(%s) = %q (error %v), want %q (error %v)", tt.url, res.Content, res.Error, tt.want, tt.err)
		}
		if res.Payload.Kind.String() != "fetch" || res.Payload.Path != tt.url {
			t.Errorf("fetch_url(%s) payload = %+v", tt.url, res.Payload)
		}
	}
	res := call(t, s, "fetch_url", map[string]any{"url": "http://docs.example.com/big"})
	if res.Error || res.Payload.Spill == "" || !strings.HasSuffix(readFile(t, res.Payload.Spill), "… [the page was cut at 2 MB]") {
		t.Errorf("fetch_url(big) = error %v, spill %q; want the page cut at 2 MB and spilled", res.Error, res.Payload.Spill)
	}
}

func TestFetchDisabled(t *testing.T) {
	s := newSet(t, t.TempDir(), Config{})
	res := call(t, s, "fetch_url", map[string]any{"url": "https://go.dev/"})
	if !res.Error || res.Content != "fetch_url is turned off for this session; work with the files in the workspace" {
		t.Errorf("fetch_url(disabled) = %q", res.Content)
	}
}

func TestHTMLToText(t *testing.T) {
	base, _ := url.Parse("https://example.com/docs/")
	tests := []struct{ in, want string }{
		{"<p>a</p><p>b</p>", "a\n\nb"},
		{"a<br>b", "a\nb"},
		{"x &lt; y &amp;&amp; <b>bold</b>", "x < y && bold"},
		{`<a href="page.html">p</a>`, "p [https://example.com/docs/page.html]"},
		{`<a href='javascript:void(0)'>j</a>`, "j"},
		{"<SCRIPT>alert(1)</SCRIPT>after", "after"},
		{"1 < 2", "1 < 2"},
		{"<h2>T</h2>text", "## T\n\ntext"},
		{"<table><tr><td>a</td><td>b</td></tr></table>", "a b"},
		{"unclosed <b", "unclosed"},
	}
	for _, tt := range tests {
		if got := htmlToText(tt.in, base); got != tt.want {
			t.Errorf("htmlToText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
