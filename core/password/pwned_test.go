package password

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// rangeServer is a local server that speaks the Pwned Passwords range API:
// GET {base}{5 hex} answers "SUFFIX:COUNT" lines of the known hashes with
// that prefix, padded with entries of count 0. It records every request.
type rangeServer struct {
	*httptest.Server
	mu     sync.Mutex
	known  map[string]int // full upper-case SHA-1 hex -> count
	reqs   []*http.Request
	status int           // when set, answer it instead
	block  bool          // hang until the request is canceled
	body   func() string // when set, answer it instead of the range
}

func newRangeServer(t *testing.T, known map[string]int) *rangeServer {
	rs := &rangeServer{known: known}
	rs.Server = httptest.NewServer(http.HandlerFunc(rs.serve))
	t.Cleanup(rs.Close)
	return rs
}

var prefixPath = regexp.MustCompile(`^/range/[0-9A-F]{5}$`)

func (rs *rangeServer) serve(w http.ResponseWriter, r *http.Request) {
	rs.mu.Lock()
	rs.reqs = append(rs.reqs, r.Clone(context.Background()))
	status, block, body := rs.status, rs.block, rs.body
	rs.mu.Unlock()
	if block {
		<-r.Context().Done()
		return
	}
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	if !prefixPath.MatchString(r.URL.Path) || r.URL.RawQuery != "" {
		http.NotFound(w, r)
		return
	}
	if body != nil {
		fmt.Fprint(w, body())
		return
	}
	prefix := strings.TrimPrefix(r.URL.Path, "/range/")
	var lines []string
	for h, n := range rs.known {
		if strings.HasPrefix(h, prefix) {
			lines = append(lines, fmt.Sprintf("%s:%d", h[5:], n))
		}
	}
	if r.Header.Get("Add-Padding") == "true" {
		for i := range 5 {
			lines = append(lines, fmt.Sprintf("%035X:0", i+1))
		}
	}
	fmt.Fprint(w, strings.Join(lines, "\r\n"))
}

func sha1Hex(pw string) string {
	s := sha1.Sum([]byte(pw))
	return strings.ToUpper(hex.EncodeToString(s[:]))
}

func newPwnedFor(t *testing.T, rs *rangeServer, change func(*PwnedConfig)) *Pwned {
	t.Helper()
	cfg := PwnedConfig{BaseURL: rs.URL + "/range/", Client: rs.Client()}
	if change != nil {
		change(&cfg)
	}
	p, err := NewPwned(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPwnedCheck: a known password is breached, an unknown one is not, a
// padding entry (count 0) for the very suffix is no breach, MinCount is
// applied, and the password is compared in its normal form.
func TestPwnedCheck(t *testing.T) {
	rs := newRangeServer(t, map[string]int{
		sha1Hex("password"):       9_545_824,
		sha1Hex("rarely seen pw"): 3,
	})
	p := newPwnedFor(t, rs, nil)
	ctx := context.Background()
	for pw, want := range map[string]error{
		"password":                        ErrBreached,
		"ｐａｓｓｗｏｒｄ":                        ErrBreached, // fullwidth: NFKC "password"
		"rarely seen pw":                  ErrBreached,
		"correct horse battery staple 42": nil,
	} {
		if err := p.Check(ctx, pw); !errors.Is(err, want) || (want == nil && err != nil) {
			t.Errorf("Check(%q) = %v, want %v", pw, err, want)
		}
	}
	if err := newPwnedFor(t, rs, func(c *PwnedConfig) { c.MinCount = 10 }).Check(ctx, "rarely seen pw"); err != nil {
		t.Errorf("MinCount 10, seen 3 times: %v, want nil", err)
	}

	// The very suffix as a padding entry, count 0, and lower case hex.
	h := sha1Hex("padded password")
	rs.body = func() string { return "0000000000000000000000000000000000A:1\r\n" + strings.ToLower(h[5:]) + ":0\r\n" }
	if err := p.Check(ctx, "padded password"); err != nil {
		t.Errorf("a padding entry for the suffix: %v, want nil", err)
	}
	rs.body = func() string { return strings.ToLower(h[5:]) + ":2\n" }
	if err := p.Check(ctx, "padded password"); !errors.Is(err, ErrBreached) {
		t.Errorf("a lower-case suffix with a count: %v, want ErrBreached", err)
	}
}

// TestPwnedKAnonymity: each check sends one GET of {base}{first 5 hex of
// the SHA-1}, with Add-Padding: true and a User-Agent, and nothing else of
// the password or its hash.
func TestPwnedKAnonymity(t *testing.T) {
	rs := newRangeServer(t, nil)
	p := newPwnedFor(t, rs, func(c *PwnedConfig) { c.UserAgent = "app-test" })
	const pw = "hunter2 but longer"
	h := sha1Hex(pw)
	if err := p.Check(context.Background(), pw); err != nil {
		t.Fatal(err)
	}
	if len(rs.reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(rs.reqs))
	}
	r := rs.reqs[0]
	if r.Method != http.MethodGet || r.URL.Path != "/range/"+h[:5] || r.URL.RawQuery != "" {
		t.Errorf("request %s %s, want GET /range/%s", r.Method, r.URL, h[:5])
	}
	if r.Header.Get("Add-Padding") != "true" || r.Header.Get("User-Agent") != "app-test" {
		t.Errorf("headers %v, want Add-Padding: true and User-Agent: app-test", r.Header)
	}
	dump := fmt.Sprint(r.URL, r.Header, r.ContentLength)
	for _, secret := range []string{pw, h[5:], h[5:10], strings.ToLower(h)} {
		if strings.Contains(dump, secret) {
			t.Errorf("the request holds %q: %s", secret, dump)
		}
	}
}

// TestPwnedFailures: an unreachable, failing, slow or garbled API is an
// error that is not ErrBreached and holds neither the password nor any of
// its hash.
func TestPwnedFailures(t *testing.T) {
	const pw = "a password to keep secret"
	h := sha1Hex(pw)
	for _, tc := range []struct {
		name string
		set  func(rs *rangeServer)
		cfg  func(c *PwnedConfig)
	}{
		{"status 503", func(rs *rangeServer) { rs.status = http.StatusServiceUnavailable }, nil},
		{"a redirect is not followed", func(rs *rangeServer) { rs.status = http.StatusFound }, func(c *PwnedConfig) { c.Client = nil }},
		{"timeout", func(rs *rangeServer) { rs.block = true }, func(c *PwnedConfig) { c.Timeout = 50 * time.Millisecond }},
		{"malformed line", func(rs *rangeServer) { rs.body = func() string { return "not a range answer" } }, nil},
		{"malformed count", func(rs *rangeServer) { rs.body = func() string { return h[5:] + ":many" } }, nil},
		{"huge answer", func(rs *rangeServer) {
			rs.body = func() string { return strings.Repeat(fmt.Sprintf("%035X:0\r\n", 1), maxPwnedBody/37+10) }
		}, nil},
		{"unreachable", func(rs *rangeServer) { rs.Close() }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newRangeServer(t, map[string]int{h: 5})
			p := newPwnedFor(t, rs, tc.cfg)
			tc.set(rs)
			err := p.Check(context.Background(), pw)
			if err == nil || errors.Is(err, ErrBreached) {
				t.Fatalf("Check = %v, want an error that is not ErrBreached", err)
			}
			for _, secret := range []string{pw, h[:5], h[5:15], strings.ToLower(h[:5])} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q holds %q", err, secret)
				}
			}
		})
	}
}

func TestNewPwnedConfig(t *testing.T) {
	p, err := NewPwned(PwnedConfig{})
	if err != nil || p.base != DefaultPwnedURL || p.timeout != 3*time.Second || p.minCount != 1 || p.userAgent != "authkit" || p.client == nil {
		t.Fatalf("defaults: %+v, %v", p, err)
	}
	for _, cfg := range []PwnedConfig{
		{BaseURL: "ftp://example.com/range/"},
		{BaseURL: "https:///range/"},
		{BaseURL: "https://example.com/range/?x=1"},
		{Timeout: -time.Second},
		{MinCount: -1},
	} {
		if _, err := NewPwned(cfg); !errors.Is(err, ErrPwnedConfig) {
			t.Errorf("NewPwned(%+v) = %v, want ErrPwnedConfig", cfg, err)
		}
	}
}
