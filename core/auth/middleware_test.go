package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// idUsers is a user store of fixed records, read by id; down makes every
// read fail as an unreachable database does.
type idUsers struct {
	user.Store
	mu    sync.Mutex
	users map[string]*user.User
	down  bool
	reads int
}

func (s *idUsers) ByID(_ context.Context, id string) (*user.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.down {
		return nil, fmt.Errorf("test: dial: %w", user.ErrUnavailable)
	}
	u, ok := s.users[id]
	if !ok {
		return nil, fmt.Errorf("test: %w", user.ErrNotFound)
	}
	c := *u
	return &c, nil
}

// jar is a session.CookieBridge that keeps what Login sets.
type jar map[string]string

func (j jar) Get(name string) (string, bool) { v, ok := j[name]; return v, ok }
func (j jar) Set(name, value string, _ session.CookieOptions) {
	j[name] = value
}
func (j jar) Delete(name string, _ session.CookieOptions) { delete(j, name) }

// sessionCookie logs u in and returns the session cookie's value.
func sessionCookie(t testing.TB, s *Service, u *user.User) string {
	t.Helper()
	j := jar{}
	if err := s.Sessions().Session(j).Login(context.Background(), u, false); err != nil {
		t.Fatal(err)
	}
	return j[s.Sessions().CookieName()]
}

// TestAuthenticate covers the decision behind every framework's
// RequireUser: the user of a valid session with nothing to send, or the
// exact response of a failure, with a dead cookie expired.
func TestAuthenticate(t *testing.T) {
	verified := &user.User{ID: "u1", Email: "ada@example.com", EmailVerifiedAt: time.Unix(1700000000, 0)}
	unverified := &user.User{ID: "u2", Email: "bob@example.com"}
	users := &idUsers{users: map[string]*user.User{"u1": verified, "u2": unverified}}
	s := testService(t, users, false)
	name := s.Sessions().CookieName()
	good := sessionCookie(t, s, verified)
	gone := sessionCookie(t, s, &user.User{ID: "deleted"})
	unverifiedCookie := sessionCookie(t, s, unverified)

	type want struct {
		id      string // the user authenticated, or ""
		status  int    // the failure's status
		error   string // the body's error
		expires bool   // the response expires the session cookie
	}
	for _, tt := range []struct {
		name     string
		cookies  map[string]string
		down     bool
		verified bool // AuthenticateVerified
		want     want
	}{
		{"valid session", map[string]string{name: good}, false, false, want{id: "u1"}},
		{"valid session, verified address", map[string]string{name: good}, false, true, want{id: "u1"}},
		{"no cookie", nil, false, false, want{status: 401, error: ErrNotAuthenticated.Message}},
		{"empty cookie", map[string]string{name: ""}, false, false, want{status: 401, error: ErrNotAuthenticated.Message}},
		{"forged cookie", map[string]string{name: good[:len(good)-2] + "AA"}, false, false, want{status: 401, error: ErrNotAuthenticated.Message, expires: true}},
		{"another cookie's name", map[string]string{"session": good}, false, false, want{status: 401, error: ErrNotAuthenticated.Message}},
		{"deleted user", map[string]string{name: gone}, false, false, want{status: 401, error: ErrNotAuthenticated.Message, expires: true}},
		{"user store down", map[string]string{name: good}, true, false, want{status: 503, error: ErrUnavailable.Message}},
		{"unverified address", map[string]string{name: unverifiedCookie}, false, true, want{status: 403, error: "Email not verified"}},
		{"unverified address, RequireUser", map[string]string{name: unverifiedCookie}, false, false, want{id: "u2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			users.mu.Lock()
			users.down, users.reads = tt.down, 0
			users.mu.Unlock()
			r := &fakeRequest{method: http.MethodGet, cookies: tt.cookies}
			check := s.Authenticate
			if tt.verified {
				check = s.AuthenticateVerified
			}
			u, resp := check(r)
			// A cookie that verifies costs one read of the user, failing
			// or not; the others none. Nothing is checked twice.
			wantReads := 0
			if v := tt.cookies[name]; v == good || v == gone || v == unverifiedCookie {
				wantReads = 1
			}
			if users.reads != wantReads {
				t.Errorf("%d user reads, want %d", users.reads, wantReads)
			}
			if tt.want.id != "" {
				if resp != nil || u == nil || u.ID != tt.want.id {
					t.Fatalf("got %v, %+v; want user %s and no response", u, resp, tt.want.id)
				}
				return
			}
			if u != nil || resp == nil {
				t.Fatalf("got %v, %+v; want no user and a %d", u, resp, tt.want.status)
			}
			var body map[string]string
			if err := json.Unmarshal(resp.Body, &body); err != nil || resp.Status != tt.want.status || body["error"] != tt.want.error ||
				body["code"] != string(codeOf(t, tt.want.status, tt.want.error)) || len(body) != 2 {
				t.Fatalf("got %d %s, want %d {\"error\":%q, \"code\": its code}", resp.Status, resp.Body, tt.want.status, tt.want.error)
			}
			expired := false
			for _, c := range resp.Cookies {
				if c.Name == name && c.MaxAge < 0 && c.Value == "" {
					expired = true
				} else {
					t.Errorf("unexpected cookie %s", c)
				}
			}
			if expired != tt.want.expires {
				t.Errorf("session cookie expired: %v, want %v", expired, tt.want.expires)
			}
		})
	}
}

// TestAuthenticateLeanPath: a request with a valid session reads the user
// store once and makes none of the state a failure's response needs, so it
// allocates less than the routes' path (a call, then its session).
func TestAuthenticateLeanPath(t *testing.T) {
	u := &user.User{ID: "u1", Email: "ada@example.com"}
	users := &idUsers{users: map[string]*user.User{"u1": u}}
	s := testService(t, users, false)
	r := &fakeRequest{method: http.MethodGet, cookies: map[string]string{s.Sessions().CookieName(): sessionCookie(t, s, u)}}
	if got, resp := s.Authenticate(r); got == nil || resp != nil {
		t.Fatalf("got %v, %+v", got, resp)
	}
	if users.reads != 1 {
		t.Fatalf("%d user reads, want 1", users.reads)
	}
	lean := testing.AllocsPerRun(50, func() { _, _ = s.Authenticate(r) })
	full := testing.AllocsPerRun(50, func() { _, _ = s.CurrentUser(r.Context(), s.Visit(r)) })
	if lean >= full {
		t.Fatalf("Authenticate makes %v allocations, the full path %v: the lean path is not taken", lean, full)
	}
}

// TestCookieValueMatchesNetHTTP: the lookup every framework module uses
// finds what http.Request.Cookie finds (FuzzCookieValue explores
// further), on strings and on fasthttp's byte slices.
func TestCookieValueMatchesNetHTTP(t *testing.T) {
	for _, lines := range cookieSeeds() {
		checkCookieValue(t, lines)
	}
}

func FuzzCookieValue(f *testing.F) {
	for _, lines := range cookieSeeds() {
		second := ""
		if len(lines) > 1 {
			second = lines[1]
		}
		f.Add(lines[0], second)
	}
	f.Fuzz(func(t *testing.T, line1, line2 string) {
		lines := []string{line1}
		if line2 != "" {
			lines = append(lines, line2)
		}
		checkCookieValue(t, lines)
	})
}

func cookieSeeds() [][]string {
	return [][]string{
		{"authkit_session=abc"},
		{"a=1; authkit_session=abc; b=2"},
		{" authkit_session = abc "},
		{`authkit_session="abc"`},
		{`authkit_session="abc`},
		{`authkit_session=""`},
		{"authkit_session="},
		{"authkit_session=a\\b; authkit_session=second"},
		{"authkit_session"},
		{"authkit_session=a b,c"},
		{"x=1;;authkit_session=\x7f; authkit_session=ok"},
		{"Authkit_session=no"},
		{"\tauthkit_session=tab\r"},
		{"authkit_session=caf\u00e9; authkit_session=plain"},
		{strings.Repeat("a=1;", 2999) + "authkit_session=at-the-limit"},
		{strings.Repeat("a=1;", 3000) + "authkit_session=over-the-limit"},
		{"authkit_session=one", "authkit_session=two"},
		{"a=1", "authkit_session=second-line"},
		{strings.Repeat("a=1;", 1500), strings.Repeat("b=2;", 1500) + "authkit_session=over"},
	}
}

func checkCookieValue(t *testing.T, lines []string) {
	t.Helper()
	const name = "authkit_session"
	want, err := (&http.Request{Header: http.Header{"Cookie": lines}}).Cookie(name)
	got, ok := CookieValue(lines, name)
	if (err == nil) != ok || err == nil && want.Value != got {
		t.Fatalf("CookieValue(%q) = %q, %v; net/http: %v, %v", lines, got, ok, want, err)
	}
	raw := make([][]byte, len(lines))
	for i, l := range lines {
		raw[i] = []byte(l)
	}
	gotb, okb := CookieValue(raw, name)
	if okb != ok || string(gotb) != got {
		t.Fatalf("CookieValue on bytes(%q) = %q, %v; on strings %q, %v", lines, gotb, okb, got, ok)
	}
}

// TestCookieValueAllocatesNothing: the lookup is on every authenticated
// request.
func TestCookieValueAllocatesNothing(t *testing.T) {
	lines := []string{"theme=dark; lang=en", "authkit_session=v1.abcdef; other=x"}
	raw := [][]byte{[]byte(lines[0]), []byte(lines[1])}
	if n := testing.AllocsPerRun(100, func() {
		if v, ok := CookieValue(lines, "authkit_session"); !ok || v != "v1.abcdef" {
			t.Fatal("not found")
		}
		if v, ok := CookieValue(raw, "authkit_session"); !ok || string(v) != "v1.abcdef" {
			t.Fatal("not found in bytes")
		}
	}); n != 0 {
		t.Fatalf("%v allocations per lookup, want 0", n)
	}
}

// BenchmarkAuthenticate: the success path of RequireUser ("lean") against
// the routes' path ("full": the call and its response state made up
// front, then the session).
func BenchmarkAuthenticate(b *testing.B) {
	u := &user.User{ID: "u1", Email: "ada@example.com"}
	s := testService(b, &idUsers{users: map[string]*user.User{"u1": u}}, false)
	r := &fakeRequest{method: http.MethodGet, cookies: map[string]string{s.Sessions().CookieName(): sessionCookie(b, s, u)}}
	for name, check := range map[string]func(Request) (*user.User, *Response){
		"lean": s.Authenticate,
		"full": func(r Request) (*user.User, *Response) {
			u, err := s.CurrentUser(r.Context(), s.Visit(r))
			if err != nil {
				resp := s.failure(r.Context(), s.Visit(r), "me", err)
				return nil, &resp
			}
			return u, nil
		},
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got, _ := check(r); got == nil {
					b.Fatal("no user")
				}
			}
		})
	}
}

// BenchmarkCookieValue: a browser's Cookie header with a session cookie
// among others, as RequireUser reads it on every request.
func BenchmarkCookieValue(b *testing.B) {
	line := "theme=dark; authkit_session=" + strings.Repeat("AbCdEfGh", 19) + "; _ga=GA1.2.345678901.1700000000; lang=en-GB"
	for name, lines := range map[string]any{"string": []string{line}, "bytes": [][]byte{[]byte(line)}} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var ok bool
				switch l := lines.(type) {
				case []string:
					_, ok = CookieValue(l, "authkit_session")
				case [][]byte:
					_, ok = CookieValue(l, "authkit_session")
				}
				if !ok {
					b.Fatal("not found")
				}
			}
		})
	}
}

// codeOf returns the code of the condition with status and text in the
// table of Codes.
func codeOf(t *testing.T, status int, text string) Code {
	t.Helper()
	for _, e := range Codes() {
		if e.Status == status && e.Message == text {
			return e.Code
		}
	}
	t.Fatalf("no condition %d %q in Codes()", status, text)
	return ""
}
