package authtest

import (
	"net/http"
	"strings"
	"testing"

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

// badInput covers docs/api.md "Request bodies": every POST route that reads a
// body refuses malformed ones with a 4xx JSON error and changes nothing.
func (s suite) badInput(t *testing.T) {
	t.Parallel()
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
					if r.status != bad.status || r.str("error") == "" || len(r.json) != 2 {
						t.Errorf("%s (%s): want %d {\"error\": text, \"code\"}", r, bad.name, bad.status)
					}
					mustCode(t, r)
				default:
					want := strings.ReplaceAll(bad.text, "$F", rt.field)
					if r.status != bad.status || r.str("error") != want || len(r.json) != 2 {
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

	t.Run("remember must be a boolean", func(t *testing.T) {
		t.Parallel()
		e := s.env(t)
		e.seed(t, "ada@example.com")
		c := e.client()
		for _, v := range []string{`"yes"`, `1`, `null`} {
			r := c.postRaw("/api/login", "application/json", []byte(`{"email":"ada@example.com","password":"`+goodPassword+`","remember":`+v+`}`))
			mustStatus(t, r, http.StatusBadRequest, "remember must be a boolean")
		}
		mustBeSignedOut(t, c)
	})

	t.Run("huge path tokens", func(t *testing.T) {
		t.Parallel()
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
			switch r.status {
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
			if r.status < 400 || r.status > 499 {
				t.Errorf("%s: status %d, want 4xx", r, r.status)
			}
		}
		e.mustMatch(t, before, "huge tokens")
	})
}

// noStore checks that every authkit route answers with Cache-Control:
// no-store, signed in or not (the client checks every reply; this subtest
// makes sure every route is asked at least once).
func (s suite) noStore(t *testing.T) {
	t.Parallel()
	e := s.env(t)
	e.seed(t, "ada@example.com")
	anon, signed := e.client(), e.loggedIn(t, "ada@example.com")
	for _, rt := range e.svc.Routes() {
		path := strings.ReplaceAll(rt.Pattern, "{token}", "x")
		for _, c := range []*client{anon, signed} {
			var r *reply
			if rt.Method == http.MethodGet {
				r = c.get(path)
			} else {
				r = c.post(path, obj{})
			}
			if cc := r.header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s: Cache-Control %q, want no-store", r, cc)
			}
		}
	}
}
