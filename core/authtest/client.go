package authtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
)

// obj is a JSON object, for request bodies and expected replies.
type obj = map[string]any

// client is one simulated browser: an *http.Client with its own cookie jar.
type client struct {
	e      *env
	t      *testing.T
	hc     *http.Client
	jar    *cookiejar.Jar
	header http.Header // sent with every request
}

// client returns a new browser with an empty cookie jar.
func (e *env) client() *client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatalf("authtest: cookie jar: %v", err)
	}
	return &client{e: e, t: e.t, jar: jar, header: http.Header{},
		hc: &http.Client{Jar: jar, Transport: e.tr, Timeout: 30 * time.Second}}
}

// clientFrom returns a new browser whose requests carry X-Forwarded-For:
// xff (believed only when Config.Proxies trusts the socket peer).
func (e *env) clientFrom(xff string) *client {
	c := e.client()
	c.header.Set("X-Forwarded-For", xff)
	return c
}

// reply is one response, read whole.
type reply struct {
	req     string // "POST /api/login", for failure messages
	status  int
	header  http.Header
	body    []byte
	json    obj            // the body as a JSON object; nil when it is not one
	cookies []*http.Cookie // the Set-Cookie lines, parsed
}

func (r *reply) String() string {
	return fmt.Sprintf("%s -> %d %s", r.req, r.status, bytes.TrimSpace(r.body))
}

// str returns the string field key of the JSON body, "" when absent.
func (r *reply) str(key string) string {
	s, _ := r.json[key].(string)
	return s
}

// setCookie returns the Set-Cookie line for name, or nil.
func (r *reply) setCookie(name string) *http.Cookie {
	for _, c := range r.cookies {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// post sends body as JSON (no body at all when body is nil). hdr holds
// extra header name, value pairs.
func (c *client) post(path string, body any, hdr ...string) *reply {
	c.t.Helper()
	if body == nil {
		return c.do(http.MethodPost, path, "", nil, hdr...)
	}
	b, err := json.Marshal(body)
	if err != nil {
		c.t.Fatalf("authtest: encode body: %v", err)
	}
	return c.do(http.MethodPost, path, "application/json", b, hdr...)
}

// postForm sends vals as application/x-www-form-urlencoded.
func (c *client) postForm(path string, vals url.Values, hdr ...string) *reply {
	c.t.Helper()
	return c.do(http.MethodPost, path, "application/x-www-form-urlencoded", []byte(vals.Encode()), hdr...)
}

// postRaw sends body as it is with the given Content-Type ("" for none).
func (c *client) postRaw(path, contentType string, body []byte, hdr ...string) *reply {
	c.t.Helper()
	return c.do(http.MethodPost, path, contentType, body, hdr...)
}

func (c *client) get(path string, hdr ...string) *reply {
	c.t.Helper()
	return c.do(http.MethodGet, path, "", nil, hdr...)
}

// do sends one request and checks what every authkit response must have:
// a JSON object body, Content-Type application/json and Cache-Control:
// no-store.
func (c *client) do(method, path, contentType string, body []byte, hdr ...string) *reply {
	c.t.Helper()
	r, err := c.try(method, path, contentType, body, hdr...)
	if err != nil {
		c.t.Fatalf("authtest: %s %s: %v", method, shorten(path), err)
	}
	if r.status == http.StatusRequestURITooLong || r.status == http.StatusRequestHeaderFieldsTooLarge {
		return r // the server refused the request before authkit saw it
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		c.t.Errorf("%s: Content-Type %q, want application/json", r, ct)
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		c.t.Errorf("%s: Cache-Control %q, want no-store", r, cc)
	}
	if r.json == nil {
		c.t.Errorf("%s: body is not a JSON object", r)
	}
	return r
}

// try is do without the checks, returning transport errors.
func (c *client) try(method, path, contentType string, body []byte, hdr ...string) (*reply, error) {
	if len(hdr)%2 != 0 {
		c.t.Fatalf("authtest: odd header list %q", hdr)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.e.base+path, rd)
	if err != nil {
		return nil, err
	}
	for k, vs := range c.header {
		req.Header[k] = slices.Clone(vs)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its text holds the whole URL, maybe 2 MB of it
			return nil, fmt.Errorf("%s %s: %w", method, shorten(path), ue.Err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	r := &reply{req: method + " " + shorten(path), status: resp.StatusCode, header: resp.Header, body: b}
	var m obj
	if json.Unmarshal(b, &m) == nil {
		r.json = m
	}
	for _, line := range resp.Header.Values("Set-Cookie") {
		ck, err := http.ParseSetCookie(line)
		if err != nil {
			c.t.Errorf("%s: unparsable Set-Cookie %q: %v", r.req, line, err)
			continue
		}
		r.cookies = append(r.cookies, ck)
	}
	return r, nil
}

// shorten keeps huge paths readable in failure messages.
func shorten(s string) string {
	if len(s) <= 120 {
		return s
	}
	return s[:100] + fmt.Sprintf("...(%d bytes)", len(s))
}

// cookie returns the cookie the jar would send to the server, or nil.
func (c *client) cookie(name string) *http.Cookie {
	for _, ck := range c.jar.Cookies(c.baseURL()) {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

// setCookie puts a cookie in the jar, as a browser whose cookie was
// changed (or stolen and planted) would send it.
func (c *client) setCookie(name, value string) {
	c.jar.SetCookies(c.baseURL(), []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}

func (c *client) baseURL() *url.URL {
	u, err := url.Parse(c.e.base + "/")
	if err != nil {
		c.t.Fatalf("authtest: base URL %q: %v", c.e.base, err)
	}
	return u
}

// Assertions on replies. Each fails the test at once when the status is
// wrong (the steps after it would only add noise) and reports a wrong text
// without stopping.

// mustStatus checks an error reply: exactly status, and a body that is
// exactly {"error": text}.
func mustStatus(t *testing.T, r *reply, status int, text string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d %q", r, r.status, status, text)
	}
	if got := r.str("error"); got != text || len(r.json) != 2 {
		t.Errorf("%s: body %s, want {\"error\":%q, \"code\"}", r, r.body, text)
	}
	mustCode(t, r)
}

// snakeCase is the form of every error code.
var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// mustCode checks the "code" of an error reply: lower snake_case, a code of
// auth.Codes() answered with the reply's status, and exactly the code of
// the condition when the reply's status and text are one of the table's.
func mustCode(t *testing.T, r *reply) {
	t.Helper()
	code := r.str("code")
	if !snakeCase.MatchString(code) {
		t.Errorf("%s: code %q, want a lower snake_case code", r, code)
		return
	}
	text := r.str("error")
	known := false
	for _, e := range auth.Codes() {
		if e.Status == r.status && e.Message == text {
			if string(e.Code) != code {
				t.Errorf("%s: code %q, want %q (the code of %d %q)", r, code, e.Code, e.Status, e.Message)
			}
			return
		}
		known = known || (string(e.Code) == code && e.Status == r.status)
	}
	if !known {
		t.Errorf("%s: code %q with status %d is not in auth.Codes()", r, code, r.status)
	}
}

// mustMessage checks a 200 {"message": text} reply.
func mustMessage(t *testing.T, r *reply, text string) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("%s: status %d, want 200 %q", r, r.status, text)
	}
	if got := r.str("message"); got != text || len(r.json) != 1 {
		t.Errorf("%s: body %s, want {\"message\":%q}", r, r.body, text)
	}
}

// mustBody checks a 200 reply whose body is exactly want (compared as
// JSON values).
func mustBody(t *testing.T, r *reply, want obj) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("%s: status %d, want 200 %v", r, r.status, want)
	}
	wb, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("authtest: encode %v: %v", want, err)
	}
	var w obj
	_ = json.Unmarshal(wb, &w)
	if !reflect.DeepEqual(r.json, w) {
		t.Errorf("%s: body %s, want %s", r, r.body, wb)
	}
}

// mustClientError checks that a reply is a 4xx {"error": non-empty string}
// (and no 5xx).
func mustClientError(t *testing.T, r *reply) {
	t.Helper()
	if r.status < 400 || r.status > 499 {
		t.Fatalf("%s: status %d, want 4xx", r, r.status)
	}
	if r.str("error") == "" || len(r.json) != 2 {
		t.Errorf("%s: body %s, want {\"error\": text, \"code\"}", r, r.body)
	}
	mustCode(t, r)
}

// mustLimited checks a 429 reply (docs/api.md, Rate limits): body
// exactly {error, retryAfter} with retryAfter the window's end in ISO 8601,
// X-RateLimit-Remaining 0, X-RateLimit-Reset the same instant, and
// Retry-After the seconds until then, rounded up. resetAt is the window's
// end by the suite's clock (its start plus its length); it is checked only
// for a limit store on the suite's clock.
func (e *env) mustLimited(t *testing.T, r *reply, text string, resetAt time.Time) {
	t.Helper()
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("%s: status %d, want 429 %q", r, r.status, text)
	}
	if r.str("error") != text || len(r.json) != 3 {
		t.Errorf("%s: body %s, want exactly {error %q, code, retryAfter}", r, r.body, text)
	}
	mustCode(t, r)
	ra, err := time.Parse(time.RFC3339Nano, r.str("retryAfter"))
	if err != nil {
		t.Fatalf("%s: retryAfter %q is not ISO 8601: %v", r, r.str("retryAfter"), err)
	}
	want := resetAt.Truncate(time.Millisecond)
	if !e.h.RealTimeLimits && !ra.Equal(want) {
		t.Errorf("%s: retryAfter %s, want the window's end %s", r, ra.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	if got := r.header.Get("X-RateLimit-Remaining"); got != "0" {
		t.Errorf("%s: X-RateLimit-Remaining %q, want \"0\"", r, got)
	}
	if hr, err := time.Parse(time.RFC3339Nano, r.header.Get("X-RateLimit-Reset")); err != nil || !hr.Equal(ra) {
		t.Errorf("%s: X-RateLimit-Reset %q, want %q (retryAfter)", r, r.header.Get("X-RateLimit-Reset"), r.str("retryAfter"))
	}
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs <= 0 {
		t.Errorf("%s: Retry-After %q, want a positive number of seconds", r, r.header.Get("Retry-After"))
	} else if !e.h.RealTimeLimits {
		wantSecs := int(math.Ceil(resetAt.Sub(e.clock.Now()).Seconds()))
		if secs != wantSecs {
			t.Errorf("%s: Retry-After %d, want %d (seconds to the window's end, rounded up)", r, secs, wantSecs)
		}
	}
}

// retryAfter returns the Retry-After seconds of a 429 reply as a duration.
func retryAfter(t *testing.T, r *reply) time.Duration {
	t.Helper()
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil {
		t.Fatalf("%s: Retry-After %q: %v", r, r.header.Get("Retry-After"), err)
	}
	return time.Duration(secs) * time.Second
}
