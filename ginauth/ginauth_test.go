package ginauth_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/clientip"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/ginauth"
	"github.com/gin-gonic/gin"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode) // no [GIN-debug] route listing
	os.Exit(m.Run())
}

// TestFlows runs the flow suite on gin, the hashes at no cost
// (FastHashing): nethttpauth's run proves the flows with bcrypt.
func TestFlows(t *testing.T) {
	h := authtest.OnMemory(func(t *testing.T, svc *auth.Service) string {
		return authtest.Serve(t, ginauth.New(svc))
	})
	h.FastHashing = true
	authtest.Run(t, h)
}

// newService returns a Service on a fresh memory store for the unit tests
// of this package.
func newService(t *testing.T, opts ...func(*auth.Config)) (*auth.Service, *mail.Capture) {
	t.Helper()
	return authtest.NewService(t, store.NewMemory(store.MemoryConfig{}), opts...)
}

// app is an engine with authkit's routes and the app's own: /private
// behind RequireUser, /verified behind RequireVerifiedEmail. calls counts
// the app handlers that ran.
func app(t *testing.T, svc *auth.Service, calls *int) string {
	t.Helper()
	r := gin.New()
	ginauth.Register(r, svc)
	r.GET("/private", ginauth.RequireUser(svc), func(c *gin.Context) {
		*calls++
		u, ok := ginauth.CurrentUser(c)
		if !ok {
			c.String(http.StatusInternalServerError, "no user on the gin.Context")
			return
		}
		// Handlers that only see the request's context find it too.
		if cu, ok := auth.UserFromContext(c.Request.Context()); !ok || cu.ID != u.ID {
			c.String(http.StatusInternalServerError, "no user in the request context")
			return
		}
		c.String(http.StatusOK, "hello %s", u.Email)
	})
	r.GET("/verified", ginauth.RequireVerifiedEmail(svc), func(c *gin.Context) {
		*calls++
		u, _ := ginauth.CurrentUser(c)
		c.String(http.StatusOK, "verified %s", u.Email)
	})
	return authtest.Serve(t, r)
}

// TestRequireUser runs the RequireUser checks of authtest on the app's
// /private: with a session; in token mode, where it takes the access token
// of a client without cookies; and with Config.RequireTwoFactor past its
// grace period, where it refuses an account without 2FA with
// two_factor_required and lets it through once 2FA is on. Each time the
// handler runs once, when the check gets through.
func TestRequireUser(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opt   func(*auth.Config)
		check func(t testing.TB, base, path, want string)
		once  string // what the one run of the handler means
	}{
		{"session", func(*auth.Config) {}, authtest.CheckRequireUser, "not behind the 401"},
		{"tokens", authtest.TokenMode, authtest.CheckRequireUserWithTokens, "only with the access token"},
		{"two factor required", authtest.TwoFactorRequiredNow, authtest.CheckRequireTwoFactor, "not behind the 403"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, _ := newService(t, tc.opt)
			var calls int
			tc.check(t, app(t, svc, &calls), "/private", "hello ada@example.com")
			if calls != 1 {
				t.Errorf("handler ran %d times, want 1 (%s)", calls, tc.once)
			}
		})
	}
}

func TestCurrentUserOutsideRequireUser(t *testing.T) {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	if u, ok := ginauth.CurrentUser(c); ok || u != nil {
		t.Errorf("CurrentUser without a request = %v, %v; want nil, false", u, ok)
	}
	c.Request = httptest.NewRequest(http.MethodGet, "/", nil)
	if u, ok := ginauth.CurrentUser(c); ok || u != nil {
		t.Errorf("CurrentUser = %v, %v; want nil, false", u, ok)
	}
	if u, ok := ginauth.CurrentUser(nil); ok || u != nil {
		t.Errorf("CurrentUser(nil) = %v, %v; want nil, false", u, ok)
	}
}

func TestCurrentUserFromRequestContext(t *testing.T) {
	// A user put in the request's context by other middleware is found.
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	want := &user.User{ID: "u1", Email: "ada@example.com"}
	c.Request = httptest.NewRequest(http.MethodGet, "/", nil)
	c.Request = c.Request.WithContext(auth.ContextWithUser(c.Request.Context(), want))
	if u, ok := ginauth.CurrentUser(c); !ok || u != want {
		t.Errorf("CurrentUser = %v, %v; want %v, true", u, ok, want)
	}
}

func TestRequireVerifiedEmail(t *testing.T) {
	svc, mailer := newService(t)
	var calls int
	authtest.CheckRequireVerifiedEmail(t, svc, mailer, app(t, svc, &calls), "/verified", "verified ada@example.com")
	if calls != 1 {
		t.Errorf("handler ran %d times, want 1 (not behind the 401 or 403)", calls)
	}
}

func TestRateLimit(t *testing.T) {
	svc, _ := newService(t)
	rl := authtest.NewRateLimit(t, svc, "search", 2)
	r := gin.New()
	var calls int
	r.GET("/search", ginauth.RateLimit(rl), func(c *gin.Context) {
		calls++
		c.String(http.StatusOK, "ok")
	})
	authtest.CheckRateLimit(t, authtest.Serve(t, r)+"/search", "ok")
	if calls != 2 {
		t.Errorf("handler ran %d times, want 2 (not behind the 429)", calls)
	}
}

// TestRateLimitWithoutService: the middleware over a ratelimit.Limiter
// alone answers as over a Service's limit, and the handler runs only for
// the allowed requests.
func TestRateLimitWithoutService(t *testing.T) {
	r := gin.New()
	var calls int
	r.GET("/search", ginauth.RateLimit(authtest.NewRequestLimiter(t, "search", 2)), func(c *gin.Context) {
		calls++
		c.String(http.StatusOK, "ok")
	})
	authtest.CheckRateLimit(t, authtest.Serve(t, r)+"/search", "ok")
	if calls != 2 {
		t.Errorf("handler ran %d times, want 2 (not behind the 429)", calls)
	}
}

// limitedEngine serves GET / behind a limit of one request per minute,
// keyed by the client address that core chooses.
func limitedEngine(t *testing.T, svc *auth.Service) string {
	t.Helper()
	rl := authtest.NewRateLimit(t, svc, "one", 1)
	r := gin.New()
	r.GET("/", ginauth.RateLimit(rl), func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	return authtest.Serve(t, r)
}

func TestClientIPIsCoreDecision(t *testing.T) {
	// gin's ClientIP trusts X-Forwarded-For from any peer by default; the
	// limit must key on core's choice, the socket peer, instead.
	t.Run("untrusted peer", func(t *testing.T) {
		svc, _ := newService(t)
		base := limitedEngine(t, svc)
		c := &http.Client{}
		if r := authtest.Send(t, c, http.MethodGet, base+"/", "", "X-Forwarded-For", "192.0.2.1"); r.Status != http.StatusOK {
			t.Fatalf("first request: %d %s", r.Status, r.Body)
		}
		r := authtest.Send(t, c, http.MethodGet, base+"/", "", "X-Forwarded-For", "192.0.2.2")
		if r.Status != http.StatusTooManyRequests {
			t.Errorf("second request with another X-Forwarded-For: %d, want 429 (same socket peer)", r.Status)
		}
	})
	t.Run("trusted proxy", func(t *testing.T) {
		svc, _ := newService(t, func(c *auth.Config) {
			c.Proxies = clientip.New(netip.MustParsePrefix("127.0.0.0/8"))
		})
		base := limitedEngine(t, svc)
		c := &http.Client{}
		for _, xff := range []string{"192.0.2.1", "192.0.2.2"} {
			if r := authtest.Send(t, c, http.MethodGet, base+"/", "", "X-Forwarded-For", xff); r.Status != http.StatusOK {
				t.Errorf("first request from %s behind a trusted proxy: %d, want 200", xff, r.Status)
			}
		}
		if r := authtest.Send(t, c, http.MethodGet, base+"/", "", "X-Forwarded-For", "192.0.2.1"); r.Status != http.StatusTooManyRequests {
			t.Errorf("second request from 192.0.2.1: %d, want 429", r.Status)
		}
	})
}

// TestNewTrustsNoProxy: the engine New makes does not let a client pick
// gin's ClientIP with X-Forwarded-For (gin's default trusts every peer).
func TestNewTrustsNoProxy(t *testing.T) {
	svc, _ := newService(t)
	e := ginauth.New(svc)
	e.GET("/ip", func(c *gin.Context) { c.String(http.StatusOK, c.ClientIP()) })
	w := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/ip", nil)
	req.RemoteAddr = "198.51.100.7:4000"
	req.Header.Set("X-Forwarded-For", "192.0.2.1")
	e.ServeHTTP(w, req)
	if got := w.Body.String(); got != "198.51.100.7" {
		t.Fatalf("ClientIP = %q, want the socket peer 198.51.100.7", got)
	}
}

// TestRegisterGroup: the routes on a group with a prefix, behind
// gin.Recovery as in an app's engine. The flow suite runs on ginauth.New
// (TestFlows); CheckMountedAt proves the prefix.
func TestRegisterGroup(t *testing.T) {
	svc, _ := newService(t)
	r := gin.New()
	r.Use(gin.Recovery())
	ginauth.Register(r.Group("/auth"), svc)
	base := authtest.Serve(t, r)
	c := authtest.CheckMountedAt(t, base, "/auth")
	authtest.WantError(t, authtest.Send(t, c, http.MethodGet, base+"/auth/api/login", ""), http.StatusMethodNotAllowed, "Method not allowed")
}

func TestMethodNotAllowed(t *testing.T) {
	svc, _ := newService(t)
	base := authtest.Serve(t, ginauth.New(svc))
	c := authtest.Browser(t)
	for _, tc := range []struct{ method, path, allow string }{
		{http.MethodGet, "/api/login", "POST"},
		{http.MethodHead, "/api/login", "POST"},
		{http.MethodOptions, "/api/2fa/setup", "POST"},
		{http.MethodPut, "/api/auth/me", "GET, HEAD"},
		{http.MethodPatch, "/api/auth/change-password", "POST"},
		{http.MethodDelete, "/api/auth/verify-email/abc", "GET, HEAD"},
		{http.MethodGet, "/api/auth/reset-password/abc", "POST"},
		{http.MethodTrace, "/api/auth/logout", "POST"},
	} {
		r := authtest.Send(t, c, tc.method, base+tc.path, "")
		if r.Status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d, want 405", tc.method, tc.path, r.Status)
		}
		if tc.method != http.MethodHead {
			authtest.WantError(t, r, http.StatusMethodNotAllowed, "Method not allowed")
		}
		if got := r.Header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
		if got := r.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s %s: Cache-Control %q, want no-store", tc.method, tc.path, got)
		}
	}
}

func TestHeadOnGetRoute(t *testing.T) {
	// net/http serves HEAD with a GET pattern; so does Register.
	svc, _ := newService(t)
	base := authtest.Serve(t, ginauth.New(svc))
	r := authtest.Send(t, authtest.Browser(t), http.MethodHead, base+"/api/auth/me", "")
	if r.Status != http.StatusUnauthorized || r.Body != "" {
		t.Errorf("HEAD /api/auth/me: %d %q, want 401 and no body", r.Status, r.Body)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", got)
	}
}

func TestNotFound(t *testing.T) {
	svc, _ := newService(t)
	base := authtest.Serve(t, ginauth.New(svc))
	c := authtest.Browser(t)
	for _, path := range []string{"/", "/api/nope", "/api/auth/me/", "/api/auth/verify-email/", "/api/auth/verify-email/a/b"} {
		authtest.WantError(t, authtest.Send(t, c, http.MethodGet, base+path, ""), http.StatusNotFound, "Not found")
	}
	authtest.WantError(t, authtest.Send(t, c, http.MethodPost, base+"/api/nope", `{}`), http.StatusNotFound, "Not found")
}

func TestRequestBodyLimit(t *testing.T) {
	// The adapter hands core at most the limit and reports a longer body.
	svc, _ := newService(t)
	base := authtest.Serve(t, ginauth.New(svc))
	body := `{"email":"` + strings.Repeat("a", 16<<10) + `@example.com","password":"x"}`
	authtest.WantError(t, authtest.Send(t, authtest.Browser(t), http.MethodPost, base+"/api/login", body), http.StatusRequestEntityTooLarge, "Request body too large")
}

func TestRequestBodyMaxBytesError(t *testing.T) {
	// An app that caps bodies itself with http.MaxBytesReader gets the
	// same 413.
	svc, _ := newService(t)
	r := gin.New()
	r.Use(func(c *gin.Context) {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, 10)
		c.Next()
	})
	ginauth.Register(r, svc)
	base := authtest.Serve(t, r)
	authtest.WantError(t, authtest.Send(t, authtest.Browser(t), http.MethodPost, base+"/api/login", `{"email":"ada@example.com","password":"x"}`),
		http.StatusRequestEntityTooLarge, "Request body too large")
}

// TestAppHandlers: an app's own handlers written with Visit, WriteHeaders
// and WriteError answer as the JSON routes do.
func TestAppHandlers(t *testing.T) {
	authtest.CheckAppHandlers(t, store.NewMemory(store.MemoryConfig{}), func(t *testing.T, svc *auth.Service) string {
		r := ginauth.New(svc)
		r.POST("/app/login", func(c *gin.Context) {
			var in authtest.AppLogin
			_ = c.ShouldBindJSON(&in)
			v := ginauth.Visit(c, svc)
			if _, err := svc.Login(c.Request.Context(), v, auth.LoginInput{Email: in.Email, Password: in.Password}); err != nil {
				ginauth.WriteError(c, svc, v, err)
				return
			}
			ginauth.WriteHeaders(c, v)
			c.String(http.StatusOK, "ok")
		})
		r.GET("/app/me", func(c *gin.Context) {
			v := ginauth.Visit(c, svc)
			u, err := svc.CurrentUser(c.Request.Context(), v)
			if err != nil {
				ginauth.WriteError(c, svc, v, err)
				return
			}
			ginauth.WriteHeaders(c, v)
			c.String(http.StatusOK, u.Email)
		})
		return authtest.Serve(t, r)
	})
}

// TestAPIKeys: RequireUser lets a personal API key through with its
// credential in the request's context, RequireScope refuses one without
// the scope (403 insufficient_scope).
func TestAPIKeys(t *testing.T) {
	svc, _ := newService(t, authtest.APIKeys)
	r := gin.New()
	ginauth.Register(r, svc)
	credential := func(c *gin.Context) { c.String(http.StatusOK, "%s", authtest.Credential(c.Request.Context())) }
	r.GET("/private", ginauth.RequireUser(svc), credential)
	r.GET("/write", ginauth.RequireScope(svc, "write"), credential) // alone: it authenticates itself
	authtest.CheckAPIKeys(t, authtest.Serve(t, r), "/private", "/write")
}
