package nethttpauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/user"
)

// request is an *http.Request as the flows see it.
type request struct{ r *http.Request }

var _ auth.Request = request{}

func (q request) Context() context.Context     { return q.r.Context() }
func (q request) Method() string               { return q.r.Method }
func (q request) Host() string                 { return q.r.Host }
func (q request) PathValue(name string) string { return q.r.PathValue(name) }
func (q request) RemoteAddr() string           { return q.r.RemoteAddr }

func (q request) Header(name string) string {
	return strings.Join(q.r.Header.Values(name), ", ")
}

func (q request) Cookie(name string) (string, bool) {
	c, err := q.r.Cookie(name)
	if err != nil {
		return "", false
	}
	return c.Value, true
}

func (q request) Body(limit int64) ([]byte, error) {
	if q.r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(q.r.Body, limit+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, fmt.Errorf("nethttpauth: %w", auth.ErrBodyTooLarge)
		}
		return nil, fmt.Errorf("nethttpauth: read body: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("nethttpauth: %w", auth.ErrBodyTooLarge)
	}
	return b, nil
}

// Request adapts r for the auth package's decisions, for apps that call a
// Service directly.
func Request(r *http.Request) auth.Request { return request{r} }

// Mount registers every authkit route on mux under prefix ("" or a path
// such as "/auth": routes then live at /auth/api/login, ...). Each route
// path also answers other methods with a JSON 405.
func Mount(mux *http.ServeMux, svc *auth.Service, prefix string) {
	prefix = strings.TrimRight(prefix, "/")
	allow := map[string][]string{}
	for _, rt := range svc.Routes() {
		path := prefix + rt.Pattern
		allow[path] = append(allow[path], rt.Method)
		mux.HandleFunc(rt.Method+" "+path, func(w http.ResponseWriter, r *http.Request) {
			resp := svc.Handle(rt, request{r})
			resp.Write(w)
		})
	}
	for path, methods := range allow {
		allowed := strings.Join(methods, ", ")
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			resp := svc.MethodNotAllowed(request{r}, allowed)
			resp.Write(w)
		})
	}
}

// Handler returns an http.Handler serving every authkit route at its spec
// path, and a JSON 404 for other paths.
func Handler(svc *auth.Service) http.Handler {
	mux := http.NewServeMux()
	Mount(mux, svc, "")
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		resp := svc.NotFound(request{r})
		resp.Write(w)
	})
	return mux
}

// RequireUser lets requests with a valid session through, with the user in
// the request's context (see CurrentUser); others get 401
// {"error":"Not authenticated"}.
func RequireUser(svc *auth.Service) func(http.Handler) http.Handler {
	return require(svc.Authenticate)
}

// RequireVerifiedEmail is RequireUser for users whose address is verified;
// an unverified one gets 403 {"error":"Email not verified"}.
func RequireVerifiedEmail(svc *auth.Service) func(http.Handler) http.Handler {
	return require(svc.AuthenticateVerified)
}

func require(check func(auth.Request) (*user.User, *auth.Response)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, deny := check(request{r})
			if deny != nil {
				deny.Write(w)
				return
			}
			next.ServeHTTP(w, r.WithContext(auth.ContextWithUser(r.Context(), u)))
		})
	}
}

// CurrentUser returns the user that RequireUser put in r's context.
func CurrentUser(r *http.Request) (*user.User, bool) {
	return auth.UserFromContext(r.Context())
}

// RateLimit limits the wrapped handler with rl: allowed requests get the
// X-RateLimit-* headers, others the same 429 {error, retryAfter} as
// authkit's routes.
func RateLimit(rl *auth.RateLimit) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h, deny := rl.Check(request{r})
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
