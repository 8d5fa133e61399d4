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

// clients returns n new browsers, for races.
func (e *env) clients(n int) []*client {
	bs := make([]*client, n)
	for i := range bs {
		bs[i] = e.client()
	}
	return bs
}

// cookieCopies returns n new browsers, each holding only the cookie name
// with value: copies of one browser's session or pending login, for races.
func (e *env) cookieCopies(n int, name, value string) []*client {
	bs := e.clients(n)
	for _, b := range bs {
		b.setCookie(name, value)
	}
	return bs
}

// reply is one response of a suite browser: the Reply that Send returns,
// with the request it answers and its Set-Cookie lines parsed.
type reply struct {
	Reply
	req     string         // "POST /api/login", for failure messages
	cookies []*http.Cookie // the Set-Cookie lines, parsed
}

func (r *reply) String() string { return r.req + " -> " + r.Reply.String() }

// str returns the string field key of the JSON body, "" when absent.
func (r *reply) str(key string) string {
	s, _ := r.JSON[key].(string)
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
	if r.Status == http.StatusRequestURITooLong || r.Status == http.StatusRequestHeaderFieldsTooLarge {
		return r // the server refused the request before authkit saw it
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		c.t.Errorf("%s: Content-Type %q, want application/json", r, ct)
	}
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		c.t.Errorf("%s: Cache-Control %q, want no-store", r, cc)
	}
	if r.JSON == nil {
		c.t.Errorf("%s: body is not a JSON object", r)
	}
	return r
}

// try is do without the checks, returning transport errors.
func (c *client) try(method, path, contentType string, body []byte, hdr ...string) (*reply, error) {
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
	if err := setHeaders(req, hdr); err != nil {
		c.t.Fatal(err)
	}
	return c.read(req, path)
}

// read sends req, made for path, and reads the reply whole.
func (c *client) read(req *http.Request, path string) (*reply, error) {
	rep, err := roundTrip(c.hc, req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its text holds the whole URL, maybe 2 MB of it
			return nil, fmt.Errorf("%s %s: %w", req.Method, shorten(path), ue.Err)
		}
		return nil, err
	}
	r := &reply{Reply: rep, req: req.Method + " " + shorten(path)}
	for _, line := range rep.Header.Values("Set-Cookie") {
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
// exactly {"error": text, "code"} with a code of auth.Codes().
func mustStatus(t *testing.T, r *reply, status int, text string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d %q", r, r.Status, status, text)
	}
	if !wantErrorBody(t, r.String(), r.Reply, text) {
		unknownCode(t, r)
	}
}

// wantErrorBody checks the body of an error reply, named what in failure
// messages: exactly {"error": text, "code"}, with the code wantCode checks,
// and reports what wantCode reports. It is the check of mustStatus and of
// WantError.
func wantErrorBody(t testing.TB, what string, r Reply, text string) (known bool) {
	t.Helper()
	if got, _ := r.JSON["error"].(string); got != text || len(r.JSON) != 2 {
		t.Errorf("%s: body %s, want {\"error\":%q, \"code\"}", what, r.Body, text)
	}
	return wantCode(t, what, r)
}

// snakeCase is the form of every error code.
var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// mustCode checks the "code" of an error reply: the checks of wantCode,
// and a code of auth.Codes() answered with the reply's status.
func mustCode(t *testing.T, r *reply) {
	t.Helper()
	if !wantCode(t, r.String(), r.Reply) {
		unknownCode(t, r)
	}
}

// unknownCode reports a code that is not one of auth.Codes() with the
// reply's status. The flow suite knows every code core answers with; the
// codes an app or a framework makes up are checked where they are made
// (mustAppError, WantError).
func unknownCode(t *testing.T, r *reply) {
	t.Helper()
	t.Errorf("%s: code %q with status %d is not in auth.Codes()", r, r.str("code"), r.Status)
}

// wantCode checks the "code" of an error reply, named what in failure
// messages: lower snake_case, and exactly the code of the condition when
// the reply's status and text are one of auth.Codes(). It reports whether
// the code is one of auth.Codes() answered with the reply's status (true
// too when it is not snake_case, which it has reported).
func wantCode(t testing.TB, what string, r Reply) (known bool) {
	t.Helper()
	code, _ := r.JSON["code"].(string)
	if !snakeCase.MatchString(code) {
		t.Errorf("%s: code %q, want a lower snake_case code", what, code)
		return true
	}
	text, _ := r.JSON["error"].(string)
	for _, e := range auth.Codes() {
		if e.Status == r.Status && e.Message == text {
			if string(e.Code) != code {
				t.Errorf("%s: code %q, want %q (the code of %d %q)", what, code, e.Code, e.Status, e.Message)
			}
			return true
		}
		known = known || (string(e.Code) == code && e.Status == r.Status)
	}
	return known
}

// mustMessage checks a 200 {"message": text} reply.
func mustMessage(t *testing.T, r *reply, text string) {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("%s: status %d, want 200 %q", r, r.Status, text)
	}
	if got := r.str("message"); got != text || len(r.JSON) != 1 {
		t.Errorf("%s: body %s, want {\"message\":%q}", r, r.Body, text)
	}
}

// mustBody checks a 200 reply whose body is exactly want (compared as
// JSON values).
func mustBody(t *testing.T, r *reply, want obj) {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("%s: status %d, want 200 %v", r, r.Status, want)
	}
	wb, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("authtest: encode %v: %v", want, err)
	}
	var w obj
	_ = json.Unmarshal(wb, &w)
	if !reflect.DeepEqual(r.JSON, w) {
		t.Errorf("%s: body %s, want %s", r, r.Body, wb)
	}
}

// mustClientError checks that a reply is a 4xx {"error": non-empty string}
// (and no 5xx).
func mustClientError(t *testing.T, r *reply) {
	t.Helper()
	if r.Status < 400 || r.Status > 499 {
		t.Fatalf("%s: status %d, want 4xx", r, r.Status)
	}
	if r.str("error") == "" || len(r.JSON) != 2 {
		t.Errorf("%s: body %s, want {\"error\": text, \"code\"}", r, r.Body)
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
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("%s: status %d, want 429 %q", r, r.Status, text)
	}
	if r.str("error") != text || len(r.JSON) != 3 {
		t.Errorf("%s: body %s, want exactly {error %q, code, retryAfter}", r, r.Body, text)
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
	if got := r.Header.Get("X-RateLimit-Remaining"); got != "0" {
		t.Errorf("%s: X-RateLimit-Remaining %q, want \"0\"", r, got)
	}
	if hr, err := time.Parse(time.RFC3339Nano, r.Header.Get("X-RateLimit-Reset")); err != nil || !hr.Equal(ra) {
		t.Errorf("%s: X-RateLimit-Reset %q, want %q (retryAfter)", r, r.Header.Get("X-RateLimit-Reset"), r.str("retryAfter"))
	}
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs <= 0 {
		t.Errorf("%s: Retry-After %q, want a positive number of seconds", r, r.Header.Get("Retry-After"))
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
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil {
		t.Fatalf("%s: Retry-After %q: %v", r, r.Header.Get("Retry-After"), err)
	}
	return time.Duration(secs) * time.Second
}
