package nethttpauth_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/nethttpauth"
)

// TestFlows runs the flow suite on net/http with bcrypt (no FastHashing):
// the one framework run that proves the flows with the real hasher.
func TestFlows(t *testing.T) {
	authtest.Run(t, authtest.OnMemory(func(t *testing.T, svc *auth.Service) string {
		return authtest.Serve(t, nethttpauth.Handler(svc))
	}))
}

// signInOnly is the store of an app that creates and verifies its accounts
// itself and wants authkit's sign-in with the lock-out: two parts.
type signInOnly struct {
	user.Accounts
	user.Lockout
}

// TestFlowsOnAStoreOfSomeParts: RunParts on a store of two parts, its
// users put in the app's way.
func TestFlowsOnAStoreOfSomeParts(t *testing.T) {
	authtest.RunParts(t, authtest.PartsHarness{
		Start: func(t *testing.T, svc *auth.Service) string { return authtest.Serve(t, nethttpauth.Handler(svc)) },
		NewStore: func(*testing.T) user.Accounts {
			m := store.NewMemory(store.MemoryConfig{})
			return signInOnly{m, m}
		},
		Seed: func(t *testing.T, s user.Accounts, u *user.User) *user.User {
			created, err := s.(signInOnly).Accounts.(*store.Memory).Create(t.Context(), u) // the app's own insert
			if err != nil {
				t.Fatal(err)
			}
			return created
		},
	})
}

// newService returns a Service on a fresh memory store for the unit tests
// of this package.
func newService(t *testing.T) (*auth.Service, *mail.Capture) {
	t.Helper()
	return authtest.NewService(t, store.NewMemory(store.MemoryConfig{}))
}

// serveWith serves svc's routes mounted at the root and h at pattern, and
// returns the base URL.
func serveWith(t *testing.T, svc *auth.Service, pattern string, h http.Handler) string {
	t.Helper()
	mux := http.NewServeMux()
	nethttpauth.Mount(mux, svc, "")
	mux.Handle(pattern, h)
	return authtest.Serve(t, mux)
}

// servePrivate serves svc's routes and, at /private behind RequireUser, a
// handler that greets the user it finds in the request, and returns the
// base URL.
func servePrivate(t *testing.T, svc *auth.Service) string {
	t.Helper()
	return serveWith(t, svc, "GET /private", nethttpauth.RequireUser(svc)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := nethttpauth.CurrentUser(r)
		if !ok {
			http.Error(w, "no user in context", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "hello "+u.Email)
	})))
}

func TestRequireUser(t *testing.T) {
	svc, _ := newService(t)
	base := servePrivate(t, svc)
	authtest.CheckRequireUser(t, base, "/private", "hello ada@example.com")
}

// TestRequireUserWithTokens: in token mode RequireUser takes the access
// token of a client without cookies.
func TestRequireUserWithTokens(t *testing.T) {
	svc, _ := authtest.NewService(t, store.NewMemory(store.MemoryConfig{}), authtest.TokenMode)
	base := servePrivate(t, svc)
	authtest.CheckRequireUserWithTokens(t, base, "/private", "hello ada@example.com")
}

// TestRequireTwoFactor: with Config.RequireTwoFactor past its grace
// period, RequireUser refuses an account without 2FA with
// two_factor_required, and lets it through once 2FA is on.
func TestRequireTwoFactor(t *testing.T) {
	svc, _ := authtest.NewService(t, store.NewMemory(store.MemoryConfig{}), authtest.TwoFactorRequiredNow)
	base := servePrivate(t, svc)
	authtest.CheckRequireTwoFactor(t, base, "/private", "hello ada@example.com")
}

func TestCurrentUserOutsideRequireUser(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if u, ok := nethttpauth.CurrentUser(r); ok || u != nil {
		t.Errorf("CurrentUser = %v, %v; want nil, false", u, ok)
	}
}

func TestRequireVerifiedEmail(t *testing.T) {
	svc, mailer := newService(t)
	base := serveWith(t, svc, "GET /verified", nethttpauth.RequireVerifiedEmail(svc)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := nethttpauth.CurrentUser(r)
		_, _ = io.WriteString(w, "verified "+u.Email)
	})))
	authtest.CheckRequireVerifiedEmail(t, svc, mailer, base, "/verified", "verified ada@example.com")
}

func TestRateLimit(t *testing.T) {
	svc, _ := newService(t)
	rl := authtest.NewRateLimit(t, svc, "search", 2)
	h := nethttpauth.RateLimit(rl)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	authtest.CheckRateLimit(t, authtest.Serve(t, h)+"/", "ok")
}

// TestRateLimitWithoutService: the middleware over a ratelimit.Limiter
// alone answers as over a Service's limit.
func TestRateLimitWithoutService(t *testing.T) {
	h := nethttpauth.RateLimit(authtest.NewRequestLimiter(t, "search", 2))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	authtest.CheckRateLimit(t, authtest.Serve(t, h)+"/", "ok")
}

func TestMountPrefix(t *testing.T) {
	svc, _ := newService(t)
	mux := http.NewServeMux()
	nethttpauth.Mount(mux, svc, "/auth/")
	authtest.CheckMountedAt(t, authtest.Serve(t, mux), "/auth")
}

func TestMethodNotAllowed(t *testing.T) {
	svc, _ := newService(t)
	base := authtest.Serve(t, nethttpauth.Handler(svc))
	c := authtest.Browser(t)
	for _, tc := range []struct{ method, path, allow string }{
		{http.MethodGet, "/api/login", "POST"},
		{http.MethodPut, "/api/auth/me", "GET"},
		{http.MethodDelete, "/api/auth/verify-email/abc", "GET"},
		{http.MethodGet, "/api/auth/reset-password/abc", "POST"},
	} {
		r := authtest.Send(t, c, tc.method, base+tc.path, "")
		authtest.WantError(t, r, http.StatusMethodNotAllowed, "Method not allowed") // Cache-Control: no-store too
		if got := r.Header.Get("Allow"); !strings.Contains(got, tc.allow) {
			t.Errorf("%s %s: Allow %q, want it to list %s", tc.method, tc.path, got, tc.allow)
		}
	}
}

func TestNotFound(t *testing.T) {
	svc, _ := newService(t)
	base := authtest.Serve(t, nethttpauth.Handler(svc))
	c := authtest.Browser(t)
	for _, path := range []string{"/", "/api/nope", "/api/auth/verify-email/", "/api/auth/verify-email/a/b"} {
		authtest.WantError(t, authtest.Send(t, c, http.MethodGet, base+path, ""), http.StatusNotFound, "Not found")
	}
}

func TestRequestBodyLimit(t *testing.T) {
	// The adapter hands core at most the limit and reports a longer body.
	svc, _ := newService(t)
	base := authtest.Serve(t, nethttpauth.Handler(svc))
	body := `{"email":"` + strings.Repeat("a", 16<<10) + `@example.com","password":"x"}`
	authtest.WantError(t, authtest.Send(t, authtest.Browser(t), http.MethodPost, base+"/api/login", body), http.StatusRequestEntityTooLarge, "Request body too large")
}

// TestAppHandlers: an app's own handlers written with Visit, WriteHeaders
// and WriteError answer as the JSON routes do.
func TestAppHandlers(t *testing.T) {
	authtest.CheckAppHandlers(t, store.NewMemory(store.MemoryConfig{}), func(t *testing.T, svc *auth.Service) string {
		mux := http.NewServeMux()
		nethttpauth.Mount(mux, svc, "")
		mux.HandleFunc("POST /app/login", func(w http.ResponseWriter, r *http.Request) {
			var in authtest.AppLogin
			_ = json.NewDecoder(r.Body).Decode(&in)
			v := nethttpauth.Visit(r, svc)
			if _, err := svc.Login(r.Context(), v, auth.LoginInput{Email: in.Email, Password: in.Password}); err != nil {
				nethttpauth.WriteError(w, r, svc, v, err)
				return
			}
			nethttpauth.WriteHeaders(w, v)
			_, _ = io.WriteString(w, "ok")
		})
		mux.HandleFunc("GET /app/me", func(w http.ResponseWriter, r *http.Request) {
			v := nethttpauth.Visit(r, svc)
			u, err := svc.CurrentUser(r.Context(), v)
			if err != nil {
				nethttpauth.WriteError(w, r, svc, v, err)
				return
			}
			nethttpauth.WriteHeaders(w, v)
			_, _ = io.WriteString(w, u.Email)
		})
		return authtest.Serve(t, mux)
	})
}

// TestAPIKeys: RequireUser lets a personal API key through with its
// credential in the request's context, RequireScope refuses one without
// the scope (403 insufficient_scope).
func TestAPIKeys(t *testing.T) {
	svc, _ := authtest.NewService(t, store.NewMemory(store.MemoryConfig{}), authtest.APIKeys)
	credential := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, authtest.Credential(r.Context()))
	})
	mux := http.NewServeMux()
	nethttpauth.Mount(mux, svc, "")
	mux.Handle("GET /private", nethttpauth.RequireUser(svc)(credential))
	mux.Handle("GET /write", nethttpauth.RequireUser(svc)(nethttpauth.RequireScope(svc, "write")(credential)))
	authtest.CheckAPIKeys(t, authtest.Serve(t, mux), "/private", "/write")
}
