package authtest

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clientip"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/user"
)

// AppLogin is the body of the app handler POST /app/login of
// CheckAppHandlers (the body of POST /api/login).
type AppLogin struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// CheckAppHandlers checks a framework module's one-liners for an app's own
// handlers (Visit, WriteHeaders, WriteError): an app that calls the typed
// methods answers an error exactly as authkit's JSON routes answer it
// (status, body, every header, Set-Cookie lines), and a success carries the
// same cookies and rate-limit headers.
//
// start serves svc through the framework: its routes at their spec paths,
// and two handlers of "the app", written with the module's one-liners and
// nothing else:
//
//   - POST /app/login: decodes an [AppLogin] from the JSON body, calls
//     svc.Login; on an error WriteError, else WriteHeaders and 200 "ok";
//   - GET /app/me: calls svc.CurrentUser; on an error WriteError, else
//     WriteHeaders and 200 with the user's email.
//
// It returns the base URL. The Service allows one login attempt per email
// and minute and trusts X-Forwarded-For, so that each request of a pair
// (route, app) starts from the same state.
func CheckAppHandlers(t *testing.T, users user.Store, start func(t *testing.T, svc *auth.Service) string) {
	t.Helper()
	hash, err := password.ForTesting().Hash(context.Background(), goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	for _, email := range []string{"route@example.com", "app@example.com", "route-ok@example.com", "app-ok@example.com"} {
		if _, err := users.ByEmail(context.Background(), email); err == nil {
			continue
		}
		reg, ok := users.(user.Registration)
		if !ok {
			t.Fatal("authtest: CheckAppHandlers needs a user store with user.Registration")
		}
		if _, err := reg.Create(context.Background(), &user.User{Email: email, Name: "Ada", PasswordHash: hash}); err != nil {
			t.Fatal(err)
		}
	}
	svc, _ := NewService(t, users, func(c *auth.Config) {
		c.Proxies = clientip.TrustAll()
		c.Limits.LoginEmail = auth.Limit{Max: 1, Window: time.Minute}
	})
	base := start(t, svc)
	c := Browser(t)
	from := 0
	send := func(method, path, body string, header ...string) Reply {
		t.Helper()
		from++ // every request from an address of its own: only the email's limit is shared
		return Send(t, c, method, base+path, body, append(header, "X-Forwarded-For", "198.51.100."+strconv.Itoa(from))...)
	}
	login := func(path, who, pw string) Reply {
		return send(http.MethodPost, path, `{"email":"`+who+`@example.com","password":"`+pw+`"}`)
	}

	// A dead session cookie: 401, and the cookie expired.
	dead := []string{"Cookie", svc.Sessions().CookieName() + "=not-a-session"}
	route, app := send(http.MethodGet, "/api/auth/me", "", dead...), send(http.MethodGet, "/app/me", "", dead...)
	if route.Status != http.StatusUnauthorized || len(route.Header.Values("Set-Cookie")) == 0 {
		t.Fatalf("GET /api/auth/me with a dead session: %s, Set-Cookie %q; want 401 expiring the cookie", route, route.Header.Values("Set-Cookie"))
	}
	sameAnswer(t, "dead session", route, app)

	// A wrong password: 401 with the rate-limit headers.
	route, app = login("/api/login", "route", "wrong horse"), login("/app/login", "app", "wrong horse")
	if route.Status != http.StatusUnauthorized || route.Header.Get("X-RateLimit-Remaining") == "" {
		t.Fatalf("wrong password: %s, headers %v; want 401 with X-RateLimit-*", route, route.Header)
	}
	sameAnswer(t, "wrong password", route, app)

	// The email's second attempt in the minute: 429, retryAfter, Retry-After.
	route, app = login("/api/login", "route", goodPassword), login("/app/login", "app", goodPassword)
	if route.Status != http.StatusTooManyRequests || route.JSON["retryAfter"] == nil || route.Header.Get("Retry-After") == "" {
		t.Fatalf("over the limit: %s, headers %v; want 429 with retryAfter and Retry-After", route, route.Header)
	}
	sameAnswer(t, "rate limited", route, app)

	// A success: the app's own body, with the route's cookies and headers.
	route, app = login("/api/login", "route-ok", goodPassword), login("/app/login", "app-ok", goodPassword)
	if route.Status != http.StatusOK || app.Status != http.StatusOK || app.Body != "ok" {
		t.Fatalf("login: the route answered %s, the app %s; want 200 and the app's ok", route, app)
	}
	for _, k := range []string{"X-Ratelimit-Remaining", "X-Ratelimit-Reset"} {
		if a, r := app.Header.Get(k), route.Header.Get(k); a != r || r == "" {
			t.Errorf("login: the app's %s %q, the route's %q", k, a, r)
		}
	}
	if a, r := cookieShapes(app.Header), cookieShapes(route.Header); !slices.Equal(a, r) || len(r) == 0 {
		t.Errorf("login: the app set cookies %q, the route %q", a, r)
	}
}

// cookieShapes are the Set-Cookie lines of h without their values: a
// session cookie's value differs from one login to the next.
func cookieShapes(h http.Header) []string {
	var out []string
	for _, ck := range (&http.Response{Header: h}).Cookies() {
		ck.Value = ""
		out = append(out, ck.String())
	}
	return out
}

// sameAnswer fails unless app answered exactly as route did: status, body,
// every header but Date, Set-Cookie lines in order.
func sameAnswer(t *testing.T, name string, route, app Reply) {
	t.Helper()
	if app.Status != route.Status || app.Body != route.Body {
		t.Errorf("%s: the app answered %s, the route %s", name, app, route)
	}
	for _, h := range []http.Header{route.Header, app.Header} {
		h.Del("Date")
	}
	keys := slices.Sorted(maps.Keys(route.Header))
	if got := slices.Sorted(maps.Keys(app.Header)); !slices.Equal(got, keys) {
		t.Errorf("%s: the app's headers %q, the route's %q", name, got, keys)
	}
	for _, k := range keys {
		if a, r := strings.Join(app.Header[k], "\n"), strings.Join(route.Header[k], "\n"); a != r {
			t.Errorf("%s: the app's %s %q, the route's %q", name, k, a, r)
		}
	}
}
