package nethttpauth

import (
	"net/http"
	"path"
	"strings"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/user"
)

// Request adapts r for the auth package's decisions, for apps that call a
// Service directly.
func Request(r *http.Request) auth.Request { return auth.HTTPRequest(r, nil) }

// Visit returns the auth.Visit of r (svc.Visit(Request(r))), for an app
// that calls the Service's typed methods from its own handlers.
func Visit(r *http.Request, svc *auth.Service) *auth.Visit { return svc.Visit(Request(r)) }

// WriteHeaders adds the headers and Set-Cookie lines the visit's answer
// must carry (the session or 2fa_pending cookie, the rate-limit headers)
// to w, before the app writes its own status and body: v.WriteHeaders(w).
// Call it once, after the flow.
func WriteHeaders(w http.ResponseWriter, v *auth.Visit) { v.WriteHeaders(w) }

// WriteError answers err as authkit's JSON routes answer it: the status,
// the body {"error", "code"} (with "retryAfter" on a 429) in the visit's
// language, the limit's headers with Retry-After on a 429, Retry-After on
// a 503, and the visit's cookies and headers. An error that is not an
// *auth.Error is logged with r's context and answered 503 (a backend) or
// 500, as auth.AsError says. It writes the visit's headers itself: call it
// instead of WriteHeaders, not after. A nil err answers 500.
func WriteError(w http.ResponseWriter, r *http.Request, svc *auth.Service, v *auth.Visit, err error) {
	if err == nil {
		err = auth.ErrInternal
	}
	op := r.Pattern
	if op == "" {
		op = r.URL.Path
	}
	resp := svc.Modules().Answer(r.Context(), v, op, nil, err)
	resp.Write(w)
}

// Mount registers every authkit route on mux under prefix ("" or a path
// such as "/auth": routes then live at /auth/api/login, ...). Each route
// path also answers other methods with a JSON 405.
func Mount(mux *http.ServeMux, svc *auth.Service, prefix string) {
	prefix = strings.TrimRight(prefix, "/")
	for _, p := range svc.Modules().Paths() {
		for _, rt := range p.Routes {
			mux.HandleFunc(rt.Method+" "+prefix+rt.Pattern, func(w http.ResponseWriter, r *http.Request) {
				resp := svc.Modules().Handle(rt, Request(r))
				resp.Write(w)
			})
		}
		mux.HandleFunc(prefix+p.Pattern, func(w http.ResponseWriter, r *http.Request) {
			resp := svc.Modules().MethodNotAllowed(Request(r), p.Allow)
			resp.Write(w)
		})
	}
}

// Handler returns an http.Handler serving every authkit route at its spec
// path, and a JSON 404 for other paths. A path that is not in clean form
// ("//api/login", "/api/./login") is one of the other paths: ServeMux
// would answer it with a redirect to the clean form, gin and fiber with a
// 404, so each route has one spelling here and on them alike.
func Handler(svc *auth.Service) http.Handler {
	notFound := func(w http.ResponseWriter, r *http.Request) {
		resp := svc.Modules().NotFound(Request(r))
		resp.Write(w)
	}
	mux := http.NewServeMux()
	Mount(mux, svc, "")
	mux.HandleFunc("/", notFound)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p != cleanPath(p) {
			notFound(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// cleanPath is p as ServeMux cleans it: no empty or dot segments, the
// trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// RequireUser lets requests with a valid session, or a personal API key
// sent as Authorization: Bearer (auth.Config.APIKeys), through, with the
// user and how it authenticated in the request's context (see CurrentUser
// and auth.CredentialFromContext); others get 401 {"error":"Not
// authenticated"} (401 invalid_api_key for a key that does not check out).
func RequireUser(svc *auth.Service) func(http.Handler) http.Handler {
	return require(func(r auth.Request) (*user.User, auth.Credential, *auth.Response) {
		return svc.AuthenticateCredential(r, false)
	})
}

// RequireVerifiedEmail is RequireUser for users whose address is verified;
// an unverified one gets 403 {"error":"Email not verified"}.
func RequireVerifiedEmail(svc *auth.Service) func(http.Handler) http.Handler {
	return require(func(r auth.Request) (*user.User, auth.Credential, *auth.Response) {
		return svc.AuthenticateCredential(r, true)
	})
}

// RequireScope is RequireUser for credentials that carry scope: a session
// has every scope, a personal API key those it was created with; a key
// without it gets 403 {"error":"Insufficient scope"}. Behind RequireUser
// it uses what RequireUser found instead of authenticating again.
func RequireScope(svc *auth.Service, scope string) func(http.Handler) http.Handler {
	return require(func(r auth.Request) (*user.User, auth.Credential, *auth.Response) {
		return svc.AuthorizeScope(r, scope)
	})
}

func require(check func(auth.Request) (*user.User, auth.Credential, *auth.Response)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, cred, deny := check(Request(r))
			if deny != nil {
				deny.Write(w)
				return
			}
			ctx := auth.ContextWithCredential(auth.ContextWithUser(r.Context(), u), cred)
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// CurrentUser returns the user that RequireUser put in r's context.
func CurrentUser(r *http.Request) (*user.User, bool) {
	return auth.UserFromContext(r.Context())
}

// RateLimit limits the wrapped handler with rl (an [*auth.RateLimit] of a
// Service, or an [*auth.RequestLimiter] over a ratelimit.Limiter alone, for
// an app that uses authkit for nothing else): allowed requests get the
// X-RateLimit-* headers, others the same 429 {error, retryAfter} as
// authkit's routes.
func RateLimit(rl auth.LimitChecker) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h, deny := rl.Check(Request(r))
			if deny != nil {
				deny.Write(w)
				return
			}
			for k, v := range h {
				w.Header()[k] = v
			}
			next.ServeHTTP(w, r)
		})
	}
}
