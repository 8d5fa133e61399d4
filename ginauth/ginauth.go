package ginauth

import (
	"net/http"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/user"
	"github.com/gin-gonic/gin"
)

// Request adapts c for the auth package's decisions, for apps that call a
// Service directly. Use it only while c's handler runs.
func Request(c *gin.Context) auth.Request { return auth.HTTPRequest(c.Request, c.Param) }

// Visit returns the auth.Visit of c's request (svc.Visit(Request(c))), for
// an app that calls the Service's typed methods from its own handlers. Use
// it only while c's handler runs.
func Visit(c *gin.Context, svc *auth.Service) *auth.Visit { return svc.Visit(Request(c)) }

// WriteHeaders adds the headers and Set-Cookie lines the visit's answer
// must carry (the session or 2fa_pending cookie, the rate-limit headers)
// to c's response, before the app writes its own status and body. Call it
// once, after the flow.
func WriteHeaders(c *gin.Context, v *auth.Visit) { v.WriteHeaders(c.Writer) }

// WriteError answers err as authkit's JSON routes answer it: the status,
// the body {"error", "code"} (with "retryAfter" on a 429) in the visit's
// language, the limit's headers with Retry-After on a 429, Retry-After on
// a 503, and the visit's cookies and headers. An error that is not an
// *auth.Error is logged with the request's context and answered 503 (a
// backend) or 500, as auth.AsError says. It writes the visit's headers
// itself: call it instead of WriteHeaders, not after. It does not abort
// the chain (c.Abort). A nil err answers 500.
func WriteError(c *gin.Context, svc *auth.Service, v *auth.Visit, err error) {
	if err == nil {
		err = auth.ErrInternal
	}
	op := c.FullPath()
	if op == "" {
		op = c.Request.URL.Path
	}
	resp := svc.Modules().Answer(c.Request.Context(), v, op, nil, err)
	resp.Write(c.Writer)
}

// methods are the methods Register answers on each authkit path: gin's
// RouterGroup.Any list.
var methods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace,
}

// Register registers every authkit route on r, at its spec path relative
// to r: on a group made with engine.Group("/auth") the routes live at
// /auth/api/login, ... A GET route also answers HEAD, and every other
// method of gin's RouterGroup.Any list gets a JSON 405 with an Allow
// header, as nethttpauth.Mount answers; other methods reach the engine's
// NoRoute handlers. Like any gin registration, it panics if r already has
// a handler for one of these method and path pairs.
func Register(r gin.IRouter, svc *auth.Service) {
	for _, p := range svc.Modules().Paths() {
		path := p.ColonPattern()
		served := map[string]bool{}
		for _, rt := range p.Routes {
			flow := func(c *gin.Context) {
				resp := svc.Modules().Handle(rt, Request(c))
				resp.Write(c.Writer)
			}
			r.Handle(rt.Method, path, flow)
			served[rt.Method] = true
			if rt.Method == http.MethodGet {
				r.Handle(http.MethodHead, path, flow)
				served[http.MethodHead] = true
			}
		}
		notAllowed := func(c *gin.Context) {
			resp := svc.Modules().MethodNotAllowed(Request(c), p.Allow)
			resp.Write(c.Writer)
		}
		for _, m := range methods {
			if !served[m] {
				r.Handle(m, path, notAllowed)
			}
		}
	}
}

// New returns a gin engine without middleware that serves every authkit
// route at its spec path and answers other paths with a JSON 404
// {"error":"Not found"}, as nethttpauth.Handler does. It turns off gin's
// trailing-slash redirects so "/api/auth/me/" is a 404 too, and it trusts
// no proxy for gin's own Context.ClientIP (gin trusts every peer by
// default); authkit's rate limits never read ClientIP, they follow
// auth.Config.Proxies. Add the app's own middleware (gin.Recovery, a
// logger), trusted proxies and routes to it as usual.
func New(svc *auth.Service) *gin.Engine {
	e := gin.New()
	e.RedirectTrailingSlash = false
	_ = e.SetTrustedProxies(nil) // never fails for nil
	e.NoRoute(func(c *gin.Context) {
		resp := svc.Modules().NotFound(Request(c))
		resp.Write(c.Writer)
	})
	Register(e, svc)
	return e
}

// RequireUser lets requests with a valid session through, with the user in
// the request's context (see CurrentUser and auth.UserFromContext); others
// get 401 {"error":"Not authenticated"} and the chain stops. The user is
// not put in gin's Keys map: that map would be made for every request.
//
// A personal API key sent as Authorization: Bearer (auth.Config.APIKeys)
// is let through too; how the request authenticated is in the context
// (auth.CredentialFromContext).
func RequireUser(svc *auth.Service) gin.HandlerFunc {
	return require(func(r auth.Request) (*user.User, auth.Credential, *auth.Response) {
		return svc.AuthenticateCredential(r, false)
	})
}

// RequireVerifiedEmail is RequireUser for users whose address is verified;
// an unverified one gets 403 {"error":"Email not verified"}.
func RequireVerifiedEmail(svc *auth.Service) gin.HandlerFunc {
	return require(func(r auth.Request) (*user.User, auth.Credential, *auth.Response) {
		return svc.AuthenticateCredential(r, true)
	})
}

// RequireScope is RequireUser for credentials that carry scope: a session
// has every scope, a personal API key those it was created with; a key
// without it gets 403 {"error":"Insufficient scope"}. Behind RequireUser
// it uses what RequireUser found instead of authenticating again.
func RequireScope(svc *auth.Service, scope string) gin.HandlerFunc {
	return require(func(r auth.Request) (*user.User, auth.Credential, *auth.Response) {
		return svc.AuthorizeScope(r, scope)
	})
}

func require(check func(auth.Request) (*user.User, auth.Credential, *auth.Response)) gin.HandlerFunc {
	return func(c *gin.Context) {
		u, cred, deny := check(Request(c))
		if deny != nil {
			deny.Write(c.Writer)
			c.Abort()
			return
		}
		ctx := auth.ContextWithCredential(auth.ContextWithUser(c.Request.Context(), u), cred)
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

// CurrentUser returns the user that RequireUser or RequireVerifiedEmail
// put in c.Request's context, or nil and false outside them. A handler
// that replaces c.Request keeps the user by deriving the new request's
// context from the old one.
func CurrentUser(c *gin.Context) (*user.User, bool) {
	if c == nil || c.Request == nil {
		return nil, false
	}
	return auth.UserFromContext(c.Request.Context())
}

// RateLimit limits the handlers after it with rl (an [*auth.RateLimit] of a
// Service, or an [*auth.RequestLimiter] over a ratelimit.Limiter alone, for
// an app that uses authkit for nothing else): allowed requests get the
// X-RateLimit-* headers, others the same 429 {error, retryAfter} as
// authkit's routes and the chain stops.
func RateLimit(rl auth.LimitChecker) gin.HandlerFunc {
	return func(c *gin.Context) {
		h, deny := rl.Check(Request(c))
		if deny != nil {
			deny.Write(c.Writer)
			c.Abort()
			return
		}
		for k, v := range h {
			c.Writer.Header()[k] = v
		}
		c.Next()
	}
}
