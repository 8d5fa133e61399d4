package authtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/user"
)

// bodyRoute is a POST route that reads a body, with one of its string
// fields and the browser state it needs to get as far as reading it.
type bodyRoute struct {
	path  string // "{token}" is replaced by a live reset token
	field string
	as    string // "anon", "session" (2FA on) or "pending" (a 2FA login)
}

var bodyRoutes = []bodyRoute{
	{"/api/2fa/confirm", "code", "session"},
	{"/api/login", "email", "anon"},
	{"/api/auth/login", "password", "anon"},
	{"/api/2fa/verify", "code", "pending"},
	{"/api/2fa/recover", "code", "pending"},
	{"/api/2fa/disable", "password", "session"},
	{"/api/auth/register", "email", "anon"},
	{"/api/auth/change-email", "newEmail", "session"},
	{"/api/auth/forgot-password", "email", "anon"},
	{"/api/auth/reset-password/{token}", "password", "anon"},
	{"/api/auth/change-password", "currentPassword", "session"},
	{"/api/auth/confirm-password", "password", "session"},
}

// badBody is one malformed request body. $F in body and text stands for the route's
// field. status 0 accepts any 4xx; text "" accepts any error text.
type badBody struct {
	name        string
	contentType string
	body        string
	status      int
	text        string
}

var badBodies = []badBody{
	{"malformed JSON", "application/json", `{"$F":`, 400, "Invalid JSON body"},
	{"JSON array", "application/json", `["$F"]`, 400, "Request body must be a JSON object"},
	{"JSON string", "application/json", `"$F"`, 400, "Request body must be a JSON object"},
	{"wrong type", "application/json", `{"$F":5}`, 400, "$F must be a string"},
	{"object for a string", "application/json", `{"$F":{"$gt":""}}`, 400, "$F must be a string"},
	{"null", "application/json", `{"$F":null}`, 400, "$F must be a string"},
	{"duplicate keys", "application/json", `{"$F":"a","$F":"b"}`, 400, "Duplicate field: $F"},
	{"invalid UTF-8", "application/json", "{\"$F\":\"\xff\xfe\"}", 400, "Request body must be valid UTF-8"},
	{"NUL in a string", "application/json", `{"$F":"a\u0000b"}`, 400, "$F contains invalid characters"},
	{"escape character in a string", "application/json", `{"$F":"a\u001bb"}`, 400, "$F contains invalid characters"},
	{"bidi override in a string", "application/json", `{"$F":"a\u202eb"}`, 400, "$F contains invalid characters"},
	{"raw control character", "application/json", "{\"$F\":\"a\x01b\"}", 400, ""},
	{"trailing data", "application/json", `{"$F":"a"} {}`, 400, "Invalid JSON body"},
	{"empty body", "application/json", ``, 0, ""},
	{"empty object", "application/json", `{}`, 0, ""},
	{"over 16 KiB", "application/json", `{"$F":"` + strings.Repeat("a", 17<<10) + `"}`, 413, "Request body too large"},
	{"text/plain", "text/plain", `{"$F":"a"}`, 415, "Unsupported content type"},
	{"multipart", "multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"$F\"\r\n\r\na\r\n--x--\r\n", 415, "Unsupported content type"},
	{"unparsable content type", "application/json; =", `{"$F":"a"}`, 415, "Unsupported content type"},
	{"form with invalid UTF-8", "application/x-www-form-urlencoded", "$F=%FF%FE", 400, "Request body must be valid UTF-8"},
	{"form with a duplicate field", "application/x-www-form-urlencoded", "$F=a&$F=b", 400, "Duplicate field: $F"},
	{"form with NUL", "application/x-www-form-urlencoded", "$F=a%00b", 400, "$F contains invalid characters"},
	{"malformed form", "application/x-www-form-urlencoded", "$F=%zz", 400, ""},
}

// snapshot is the store and mail state before a bad request.
type snapshot struct {
	users []*user.User
	mails int
}

func (e *env) snapshot(t *testing.T, ids ...string) snapshot {
	t.Helper()
	s := snapshot{mails: e.mailCount(t)}
	for _, id := range ids {
		s.users = append(s.users, e.byID(t, id))
	}
	return s
}

func (e *env) mustMatch(t *testing.T, s snapshot, after string) {
	t.Helper()
	for _, u := range s.users {
		if got := e.byID(t, u.ID); !sameUser(got, u) {
			t.Errorf("after %s: store: user %s changed:\n got %+v\nwant %+v", after, u.ID, got, u)
		}
	}
	if n := e.mailCount(t); n != s.mails {
		t.Errorf("after %s: %d mails, want %d", after, n, s.mails)
	}
}

func (s suite) refusesBadBodies(t *testing.T) {
	for _, rt := range bodyRoutes {
		t.Run(strings.TrimPrefix(rt.path, "/api/"), func(t *testing.T) {
			t.Parallel()
			e := s.env(t, relaxed)
			c, u, _, _ := e.twoFactorUser(t)
			var who *client
			switch rt.as {
			case "session":
				who = c
			case "pending":
				who = e.client()
				pendingLogin(t, who, "ada@example.com")
			default:
				who = e.client()
			}
			path := strings.ReplaceAll(rt.path, "{token}", e.resetToken(t, "ada@example.com"))
			for _, bad := range badBodies {
				before := e.snapshot(t, u.ID)
				body := strings.ReplaceAll(bad.body, "$F", rt.field)
				r := who.postRaw(path, bad.contentType, []byte(body))
				switch {
				case bad.status == 0:
					mustClientError(t, r)
				case bad.text == "":
					if r.Status != bad.status || r.str("error") == "" || len(r.JSON) != 2 {
						t.Errorf("%s (%s): want %d {\"error\": text, \"code\"}", r, bad.name, bad.status)
					}
					mustCode(t, r)
				default:
					want := strings.ReplaceAll(bad.text, "$F", rt.field)
					if r.Status != bad.status || r.str("error") != want || len(r.JSON) != 2 {
						t.Errorf("%s (%s): want %d {\"error\":%q, \"code\"}", r, bad.name, bad.status, want)
					}
					mustCode(t, r)
				}
				if r.setCookie(sessionCookie) != nil && r.setCookie(sessionCookie).MaxAge >= 0 {
					t.Errorf("%s (%s): a refused request sets a session", r, bad.name)
				}
				e.mustMatch(t, before, bad.name)
			}
			if rt.as == "pending" && who.cookie(auth.PendingCookie) == nil {
				t.Errorf("bad bodies cost the browser its %s cookie", auth.PendingCookie)
			}
			if rt.as == "session" {
				mustBeSignedIn(t, c, "ada@example.com")
			}
		})
	}
}

func (s suite) rememberMustBeBoolean(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	c := e.client()
	for _, v := range []string{`"yes"`, `1`, `null`} {
		r := c.postRaw("/api/login", "application/json", []byte(`{"email":"ada@example.com","password":"`+goodPassword+`","remember":`+v+`}`))
		mustStatus(t, r, http.StatusBadRequest, "remember must be a boolean")
	}
	mustBeSignedOut(t, c)
}

func (s suite) hugePathTokens(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	before := e.snapshot(t, u.ID)
	huge := strings.Repeat("A", 100<<10)
	check := func(method, path string, body []byte, text string) {
		t.Helper()
		r, err := e.client().try(method, path, "application/json", body)
		if err != nil {
			// A server whose read buffer is smaller than the request
			// line (fiber's) answers 431 and closes at once; the client
			// may see the close before the answer. Refused either way.
			t.Logf("%s %d-byte path: the server dropped the request (%v)", method, len(path), err)
			return
		}
		switch r.Status {
		case http.StatusRequestURITooLong, http.StatusRequestHeaderFieldsTooLarge:
			// The server refused the request line: fine.
		default:
			mustStatus(t, r, http.StatusBadRequest, text)
		}
	}
	check(http.MethodGet, verifyPath(huge), nil, errVerifyInvalid)
	check(http.MethodPost, resetPath(huge), []byte(`{"password":"`+newPassword+`","confirmPassword":"`+newPassword+`"}`), errResetInvalid)
	// Absurd sizes may be refused by the server before authkit sees
	// them, or the connection dropped mid-request; never a 5xx.
	absurd := strings.Repeat("A", 2<<20)
	for _, req := range []struct{ method, path string }{{http.MethodGet, verifyPath(absurd)}, {http.MethodPost, resetPath(absurd)}} {
		r, err := e.client().try(req.method, req.path, "application/json", []byte(`{"password":"x","confirmPassword":"x"}`))
		if err != nil {
			t.Logf("%s %d-byte path: the server dropped the request (%v)", req.method, len(req.path), err)
			continue
		}
		if r.Status < 400 || r.Status > 499 {
			t.Errorf("%s: status %d, want 4xx", r, r.Status)
		}
	}
	e.mustMatch(t, before, "huge tokens")
}

// hostileTimeout bounds every hostile request: a route that hangs on an
// input fails the test instead of the run.
const hostileTimeout = 10 * time.Second

// hostileBody is one entry of the body corpus that every POST route is
// sent. $F in body stands for the route's field (bodyRoutes), "email" for
// a route that reads no body; $E for the field with its first letter
// escaped (\u0065mail), $P for the same in a form (%65mail). big marks a
// body the server may refuse by closing the connection; it goes to
// bigRoutes only. A route that reads no body gets only the entries marked
// every: what the HTTP layer itself might trip on.
type hostileBody struct {
	name        string
	contentType string
	body        string
	chunked     bool // sent without Content-Length
	big         bool
	every       bool // sent to the routes that read no body too; else only to those that do
	// The exact refusal of a route that reads a body, when it is one
	// for every such route ($F the field); else any 4xx.
	status int
	text   string
}

// bigRoutes get the big bodies: one route that reads a body and one that
// reads none. Every route's body goes through the same size limit, and
// megabytes for each would only slow the suite.
var bigRoutes = map[string]bool{"/api/auth/register": true, "/api/auth/logout": true}

// escapeFirst writes s with its first byte as a JSON \u escape, so that a
// key reads the same once decoded but differs as raw text.
func escapeFirst(s string) string { return fmt.Sprintf(`\u%04x`, s[0]) + s[1:] }

// What input.go's badBodies leaves out: nesting, sizes far past the
// limit, hostile keys, huge and multi-line addresses.
var hostileBodies = []hostileBody{
	{name: "deeply nested arrays in the field", contentType: "application/json",
		body: `{"$F":` + strings.Repeat("[", 4000) + strings.Repeat("]", 4000) + `}`, every: true, status: 400, text: "$F must be a string"},
	{name: "deeply nested objects beside the field", contentType: "application/json",
		body: `{"zz":` + strings.Repeat(`{"a":`, 2500) + `0` + strings.Repeat("}", 2500) + `,"$F":"x"}`},
	{name: "unterminated nesting", contentType: "application/json", body: `{"$F":` + strings.Repeat("[{", 7000), every: true, status: 400, text: "Invalid JSON body"},
	{name: "1 MiB body", contentType: "application/json", body: `{"$F":"` + strings.Repeat("a", 1<<20) + `"}`, big: true, every: true, status: 413, text: "Request body too large"},
	{name: "1 MiB chunked body", contentType: "application/json", body: `{"$F":"` + strings.Repeat("a", 1<<20) + `"}`, chunked: true, big: true, every: true, status: 413, text: "Request body too large"},
	{name: "invalid UTF-8 in a key", contentType: "application/json", body: "{\"\xff\xfe\":\"a\",\"$F\":\"b\"}", every: true, status: 400, text: "Request body must be valid UTF-8"},
	{name: "NUL in a key", contentType: "application/json", body: `{"$F\u0000":"a","$F":"b"}`},
	{name: "raw NUL byte", contentType: "application/json", body: "{\"$F\":\"a\x00b\"}", every: true, status: 400, text: "Invalid JSON body"},
	{name: "duplicate key, once escaped", contentType: "application/json", body: `{"$F":"a","$E":"b"}`, status: 400, text: "Duplicate field: $F"},
	{name: "duplicate key in a form, once escaped", contentType: "application/x-www-form-urlencoded", body: "$F=a&$P=b", status: 400, text: "Duplicate field: $F"},
	{name: "10 KB email", contentType: "application/json", body: `{"$F":"` + strings.Repeat("a", 10<<10) + `@example.com"}`},
	{name: "email with CRLF and a Bcc header", contentType: "application/json", body: `{"$F":"ada@example.com\r\nBcc: x@evil.test"}`},
	{name: "form email with CRLF and a Bcc header", contentType: "application/x-www-form-urlencoded",
		body: "$F=ada%40example.com%0D%0ABcc%3A+x%40evil.test"},
	{name: "number beyond float64", contentType: "application/json", body: `{"$F":1e999999}`, status: 400, text: "$F must be a string"},
	{name: "byte order mark", contentType: "application/json", body: "\xef\xbb\xbf{\"$F\":\"a\"}"},
	{name: "15 KB key", contentType: "application/json", body: `{"` + strings.Repeat("k", 15<<10) + `":1,"$F":"a"}`},
	{name: "2000 keys", contentType: "application/json", body: `{` + manyKeys(2000) + `"$F":"a"}`},
	{name: "charset that is not UTF-8", contentType: "application/json; charset=utf-16", body: `{"$F":"a"}`},
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	return b.String()
}

// hostileHeaders is the header corpus every route is sent, with an empty
// JSON object as the body of a POST.
var hostileHeaders = []struct {
	name   string
	header []string
}{
	{"4 KiB garbage session cookie, and 100 more", []string{"Cookie",
		sessionCookie + "=" + strings.Repeat("A.", 2<<10) + "; " + strings.Repeat(sessionCookie+`="..."; `, 100)}},
	{"8 KiB X-Forwarded-For of garbage", []string{"X-Forwarded-For", strings.Repeat("1.2.3.4, ::, \xff\xfe, [::1]:80, 999.1.1.1, -, ", 200)}},
	{"Origin null", []string{"Origin", "null"}},
	{"Content-Type with an invalid charset", []string{"Content-Type", "application/json; charset=\xff\xfe"}},
	{"Content-Type with many parameters", []string{"Content-Type", "application/json" + strings.Repeat("; a=b", 500)}},
}

// hostileTokens is the path-token corpus, sent to the routes with {token}.
// A token that is not a valid URL path, or holds an encoded slash, may
// never reach an authkit route (outside): the HTTP server or the app's
// router may answer it, with a 4xx in its own format.
var hostileTokens = []struct {
	name, token string
	outside     bool
}{
	{"100 KB token", strings.Repeat("A", 100<<10), false},
	{"NUL", "a%00b", false},
	{"invalid UTF-8", "%FF%FE", false},
	{"CRLF", "a%0D%0ASet-Cookie:%20x=y", false},
	{"dot segments", "..%2F..%2Fme", true},
	{"encoded dot segment", "%2e%2e", false},
	{"a token and a query", "abc?token=def", false},
	{"percent without hex", "%zz", true},
}

func (s suite) hostileEveryRoute(t *testing.T) {
	e := s.env(t, relaxed, fast, emailCodesWhereStored)
	_, ada, _, _ := e.twoFactorUser(t)
	fields := map[string]string{}
	for _, rt := range bodyRoutes {
		fields[strings.SplitN(rt.path, "{", 2)[0]] = rt.field
	}
	routes := e.svc.Modules().Routes()
	// Each route gets a user of its own without 2FA, signed in, and a
	// pending 2FA login of ada: every request carries both cookies.
	// Then the routes are sent their corpus all at once.
	users := []*user.User{e.byID(t, ada.ID)}
	var emails []string
	for k := range routes {
		email := fmt.Sprintf("user%d@example.com", k)
		users = append(users, e.seedFast(t, email))
		emails = append(emails, email)
	}
	sessions := e.logins(t, emails, obj{"success": true})
	pendings := e.pendingBrowsers(t, "ada@example.com", len(routes))
	verifyTok := e.verifyToken(t, "ada@example.com")
	var wg sync.WaitGroup
	for k, rt := range routes {
		sess, pending := sessions[k].cookie(sessionCookie).Value, pendings[k].cookie(auth.PendingCookie).Value
		path := rt.Pattern
		switch {
		case strings.Contains(path, "verify-email"):
			path = strings.ReplaceAll(path, "{token}", url.PathEscape(verifyTok))
		case strings.Contains(path, "{token}"):
			path = strings.ReplaceAll(path, "{token}", url.PathEscape(e.resetToken(t, emails[k])))
		}
		wg.Go(func() { e.sendCorpus(t, rt, path, fields, sess, pending) })
	}
	wg.Wait()
	e.mustCleanMail(t)
	for i, u := range users {
		if i > 0 && routes[i-1].Pattern == "/api/auth/delete-account" {
			// A well-formed body there deletes its signed-in user, as it
			// should; deletion.go tests what it must refuse.
			continue
		}
		got := e.byID(t, u.ID)
		if got.Email != u.Email || got.PasswordHash != u.PasswordHash || got.TwoFactorEnabled != u.TwoFactorEnabled {
			t.Errorf("store: the corpus changed user %s: %+v", u.Email, got)
		}
	}
	for _, m := range e.mail.Messages() {
		if !slices.Contains(emails, m.To) && m.To != "ada@example.com" {
			t.Errorf("a %s mail went to %q", m.Kind, m.To)
		}
	}
	// The server still answers.
	mustLogin(t, e.client(), emails[0], goodPassword)
}

func (s suite) hostileAddresses(t *testing.T) {
	e := s.env(t, relaxed, fast)
	e.seedFast(t, "ada@example.com")
	c := e.loggedIn(t, "ada@example.com")
	long := strings.Repeat("a", 10<<10) + "@example.com"
	for _, ec := range []struct {
		name, email string
		text        string // the 400 text of register, forgot-password and change-email; $F the field
	}{
		{"10 KB address", long, "Email address is too long"},
		{"CRLF and a Bcc header", "ada@example.com\r\nBcc: x@evil.test", "$F contains invalid characters"},
		{"LF and a Bcc header", "eve@example.com\nBcc: x@evil.test", "$F contains invalid characters"},
		{"trailing CRLF", "eve@example.com\r\n", "$F contains invalid characters"},
		{"NEL", "eve@example.com\u0085Bcc: x@evil.test", "$F contains invalid characters"},
		{"line separator", "eve@example.com\u2028Bcc: x@evil.test", "Invalid email address"},
		{"two addresses", "eve@example.com, x@evil.test", "Invalid email address"},
		{"a display name", "Eve <x@evil.test>", "Invalid email address"},
	} {
		for _, rt := range []struct {
			path, field string
			body        obj
			status      int
			text        string
		}{
			{"/api/auth/register", "email", obj{"password": goodPassword, "name": "Eve"}, 400, ec.text},
			{"/api/auth/forgot-password", "email", obj{}, 400, ec.text},
			{"/api/auth/change-email", "newEmail", obj{"password": goodPassword}, 400, ec.text},
			// Login answers a malformed address like an unknown one.
			{"/api/login", "email", obj{"password": goodPassword}, 401, errInvalidCredentials},
		} {
			body := obj{rt.field: ec.email}
			for k, v := range rt.body {
				body[k] = v
			}
			r := c.post(rt.path, body)
			text := strings.ReplaceAll(rt.text, "$F", rt.field)
			if rt.path == "/api/login" && strings.Contains(ec.text, "invalid characters") {
				text, rt.status = strings.ReplaceAll(ec.text, "$F", rt.field), 400
			}
			mustStatus(t, r, rt.status, text)
		}
	}
	mustBeSignedIn(t, c, "ada@example.com")
	if got := e.user(t, "ada@example.com"); got.Email != "ada@example.com" {
		t.Errorf("store: email %q", got.Email)
	}
	e.mustCleanMail(t)
}

func (s suite) hostileNames(t *testing.T) {
	e := s.env(t, relaxed, fast)
	for i, name := range []string{
		"Eve\r\nBcc: x@evil.test",
		"Eve\nBcc: x@evil.test",
		"Eve\rBcc: x@evil.test",
		"Eve\u0085Bcc: x@evil.test",
		"Eve\u2028Bcc: x@evil.test",
		"Eve\u2029Bcc: x@evil.test",
		"=?utf-8?q?Eve=0D=0ABcc:_x@evil.test?=",
	} {
		email := fmt.Sprintf("eve%d@example.com", i)
		for _, form := range []bool{false, true} {
			c := e.client()
			var r *reply
			if form {
				r = c.postForm("/api/auth/register", url.Values{"email": {email}, "password": {goodPassword}, "name": {name}})
			} else {
				r = c.post("/api/auth/register", obj{"email": email, "password": goodPassword, "name": name})
			}
			switch {
			case r.Status == http.StatusOK:
				// Accepted: the mails it causes are checked below.
				mustMessage(t, r, msgRegistered)
				mustMessage(t, c.post("/api/auth/resend-verification", nil), msgVerificationSent)
				mustMessage(t, c.post("/api/auth/forgot-password", obj{"email": email}), msgForgotSent)
				if strings.ContainsAny(e.user(t, email).Name, "\r\n") {
					t.Errorf("store: name %q holds a line break", e.user(t, email).Name)
				}
			case strings.ContainsAny(name, "\r\n\u0085"):
				mustStatus(t, r, http.StatusBadRequest, "name contains invalid characters")
				e.noUser(t, email)
			default:
				mustClientError(t, r)
			}
			email = "form." + email
		}
	}
	e.mustCleanMail(t)
}

// sendCorpus sends route rt (at path, its token filled in) the body,
// header and token corpus, each request with the session and pending
// cookies given, and checks every reply. It only reports errors, so that
// the routes can be sent their corpus concurrently.
func (e *env) sendCorpus(t *testing.T, rt auth.Route, path string, fields map[string]string, sess, pending string) {
	field, readsBody := fields[strings.SplitN(rt.Pattern, "{", 2)[0]]
	if !readsBody {
		field = "email"
	}
	send := func(p, contentType string, body []byte, chunked bool, hdr ...string) (*reply, error) {
		c := e.client()
		c.hc.Timeout = hostileTimeout
		c.setCookie(sessionCookie, sess)
		c.setCookie(auth.PendingCookie, pending)
		return c.hostile(rt.Method, p, contentType, body, chunked, hdr...)
	}
	if rt.Method == http.MethodPost {
		for _, hb := range hostileBodies {
			if hb.big && !bigRoutes[rt.Pattern] || !hb.every && !readsBody {
				continue
			}
			body := strings.NewReplacer("$F", field, "$E", escapeFirst(field),
				"$P", fmt.Sprintf("%%%02X%s", field[0], field[1:])).Replace(hb.body)
			r, err := send(path, hb.contentType, []byte(body), hb.chunked)
			what := rt.Method + " " + rt.Pattern + " (" + hb.name + ")"
			mustSurvive(t, what, r, err, hb.big, readsBody)
			if want := strings.ReplaceAll(hb.text, "$F", field); err == nil && readsBody && hb.text != "" &&
				(r.Status != hb.status || r.str("error") != want) {
				t.Errorf("%s: %s; want %d {\"error\":%q}", what, r, hb.status, want)
			}
		}
	}
	for _, hh := range hostileHeaders {
		var body []byte
		ct := ""
		if rt.Method == http.MethodPost {
			body, ct = []byte(`{}`), "application/json"
		}
		r, err := send(path, ct, body, false, hh.header...)
		mustSurvive(t, rt.Method+" "+rt.Pattern+" ("+hh.name+")", r, err, false, false)
	}
	if !strings.Contains(rt.Pattern, "{token}") {
		return
	}
	for _, ht := range hostileTokens {
		p := strings.ReplaceAll(rt.Pattern, "{token}", ht.token)
		r, err := send(p, "application/json", []byte(`{"password":"`+newPassword+`","confirmPassword":"`+newPassword+`"}`), false)
		what := rt.Method + " " + rt.Pattern + " (" + ht.name + ")"
		if ht.outside && err == nil && r.Status >= 400 && r.Status < 500 && r.JSON == nil {
			t.Logf("%s: %s: answered before any authkit route", what, r)
			continue
		}
		mustSurvive(t, what, r, err, len(ht.token) > 64<<10, true)
	}
}

// hostile sends one request like try, with the path sent exactly as
// given (even a malformed escape) and the body chunked (no Content-Length)
// when asked.
func (c *client) hostile(method, path, contentType string, body []byte, chunked bool, hdr ...string) (*reply, error) {
	var rd io.Reader = bytes.NewReader(body)
	if chunked {
		rd = io.MultiReader(rd) // hides the length
	}
	base, err := url.Parse(c.e.base)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(method, base.Scheme+"://"+base.Host+"/", rd)
	if err != nil {
		return nil, err
	}
	req.URL.Opaque = base.Path + path // the harness may serve under a prefix
	if body == nil {
		req.Body, req.ContentLength = nil, 0
	}
	if chunked {
		req.ContentLength = -1
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if err := setHeaders(req, hdr); err != nil {
		return nil, err
	}
	return c.read(req, path)
}

// mustSurvive checks a reply to a hostile request: no transport failure
// but a dropped connection for a request the server may refuse unread
// (big), never a 5xx, a JSON {"error"} body on every refusal, and a 4xx
// when the route reads a body (mustRefuse).
func mustSurvive(t *testing.T, what string, r *reply, err error, big, mustRefuse bool) {
	t.Helper()
	if err != nil {
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			t.Errorf("%s: no answer within %s: %v", what, hostileTimeout, err)
		case big && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
			t.Logf("%s: the server refused it by dropping the connection (%v)", what, errShort(err))
		default:
			t.Errorf("%s: %v", what, errShort(err))
		}
		return
	}
	switch {
	case r.Status >= 500:
		t.Errorf("%s: %s: a 5xx", what, r)
	case r.Status == http.StatusRequestURITooLong || r.Status == http.StatusRequestHeaderFieldsTooLarge:
		// Refused before authkit saw it.
	case r.Status >= 400 && (r.str("error") == "" || r.str("code") == "" || len(r.JSON) != 2):
		t.Errorf("%s: %s: want a JSON {\"error\": text, \"code\"} body", what, r)
	case mustRefuse && r.Status < 400:
		t.Errorf("%s: %s: want a 4xx", what, r)
	}
	if r.Status >= 200 && r.Status < 300 && r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: %s: Cache-Control %q", what, r, r.Header.Get("Cache-Control"))
	}
}

// errShort keeps a transport error's text readable when it quotes a huge
// URL.
func errShort(err error) string { return shorten(err.Error()) }
