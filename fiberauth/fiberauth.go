package fiberauth

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/user"
)

// request is a *fiber.Ctx as the flows see it. fasthttp reuses the
// request's buffers once the handler returns, and core may keep what it
// reads (a mail is rendered on another goroutine), so every string and the
// body handed out here is a copy.
type request struct{ c *fiber.Ctx }

var _ auth.QueryRequest = request{}

func (q request) Context() context.Context { return q.c.UserContext() }
func (q request) Method() string           { return strings.Clone(q.c.Method()) }
func (q request) Host() string             { return string(q.c.Request().Host()) }

// RawQuery implements auth.QueryRequest (a copy).
func (q request) RawQuery() string { return string(q.c.Request().URI().QueryString()) }

// RemoteAddr is the socket peer, never c.IP(): core applies its own
// trusted-proxy rule to it and X-Forwarded-For.
func (q request) RemoteAddr() string { return q.c.Context().RemoteAddr().String() }

// Header compares names case-insensitively itself, so it also works when
// the app sets fiber.Config.DisableHeaderNormalizing.
func (q request) Header(name string) string {
	var b []byte
	n := 0
	key := []byte(name)
	q.c.Request().Header.VisitAll(func(k, v []byte) {
		if bytes.EqualFold(k, key) {
			if n > 0 {
				b = append(b, ", "...)
			}
			b = append(b, v...)
			n++
		}
	})
	return string(b)
}

// PathValue unescapes the parameter as net/http's ServeMux does, unless
// fiber already did (fiber.Config.UnescapePath).
func (q request) PathValue(name string) string {
	v := strings.Clone(q.c.Params(name))
	if q.c.App().Config().UnescapePath {
		return v
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

// Cookie reads the Cookie header with net/http's rules (auth.CookieValue),
// so a cookie that net/http would drop is dropped here too. Only the
// value found is copied out of fasthttp's buffers.
func (q request) Cookie(name string) (string, bool) {
	v, ok := auth.CookieValue(q.c.Request().Header.PeekAll(fiber.HeaderCookie), name)
	return string(v), ok
}

// Body returns a copy of the raw body: never decompressed (fiber's
// Ctx.Body inflates Content-Encoding: gzip without a bound; net/http does
// not inflate either).
func (q request) Body(limit int64) ([]byte, error) {
	req := q.c.Request()
	if req.IsBodyStream() {
		b, err := io.ReadAll(io.LimitReader(req.BodyStream(), limit+1))
		if err != nil {
			return nil, fmt.Errorf("fiberauth: read body: %w", err)
		}
		if int64(len(b)) > limit {
			return nil, fmt.Errorf("fiberauth: %w", auth.ErrBodyTooLarge)
		}
		return b, nil
	}
	b := req.Body()
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("fiberauth: %w", auth.ErrBodyTooLarge)
	}
	return append([]byte(nil), b...), nil
}

// Request adapts c for the auth package's decisions, for apps that call a
// Service directly. Its strings and body are copies, safe to keep after
// the handler returns.
func Request(c *fiber.Ctx) auth.Request { return request{c} }

// write sends resp as it is: core's headers replace any fiber set (its
// default Content-Type among them), each cookie is one raw Set-Cookie line
// formatted by net/http, then status and body.
func write(c *fiber.Ctx, resp *auth.Response) error {
	setHeaders(c, resp.Header)
	for _, line := range resp.SetCookieLines() {
		c.Response().Header.Add(fiber.HeaderSetCookie, line)
	}
	// Send keeps resp.Body without copying it; nothing else holds it.
	return c.Status(resp.Status).Send(resp.Body)
}

// Visit returns the auth.Visit of c's request (svc.Visit(Request(c))), for
// an app that calls the Service's typed methods from its own handlers.
func Visit(c *fiber.Ctx, svc *auth.Service) *auth.Visit { return svc.Visit(request{c}) }

// WriteHeaders puts the headers and Set-Cookie lines the visit's answer
// must carry (the session or 2fa_pending cookie, the rate-limit headers)
// on c's response, before the app writes its own status and body; fiber's
// counterpart of auth.Visit.WriteHeaders. Call it once, after the flow.
func WriteHeaders(c *fiber.Ctx, v *auth.Visit) {
	setHeaders(c, v.Header())
	for _, ck := range v.Cookies() {
		if line := ck.String(); line != "" {
			c.Response().Header.Add(fiber.HeaderSetCookie, line)
		}
	}
}

// WriteError answers err as authkit's JSON routes answer it: the status,
// the body {"error", "code"} (with "retryAfter" on a 429) in the visit's
// language, the limit's headers with Retry-After on a 429, Retry-After on
// a 503, and the visit's cookies and headers. An error that is not an
// *auth.Error is logged with c.UserContext() and answered 503 (a backend)
// or 500, as auth.AsError says. It writes the visit's headers itself: call
// it instead of WriteHeaders, not after. It returns what fiber's Send
// returns, for the handler to return. A nil err answers 500.
func WriteError(c *fiber.Ctx, svc *auth.Service, v *auth.Visit, err error) error {
	if err == nil {
		err = auth.ErrInternal
	}
	resp := svc.Modules().Answer(c.UserContext(), v, strings.Clone(c.Route().Path), nil, err)
	return write(c, &resp)
}

// setHeaders sets every header of h on c's response, replacing fiber's.
func setHeaders(c *fiber.Ctx, h http.Header) {
	rh := &c.Response().Header
	for k, vs := range h {
		rh.Del(k)
		for _, v := range vs {
			rh.Add(k, v)
		}
	}
}

// Register adds every authkit route to r: an app, or a group whose prefix
// the routes then live under (app.Group("/auth") serves /auth/api/login,
// ...). GET routes answer HEAD too, as on net/http. Each route path also
// answers every other method with a JSON 405 and an Allow header, so a
// route the app adds later on one of these paths is never reached. Paths
// that match no route reach fiber's error handler: [ApplyConfig] makes
// that a JSON 404.
func Register(r fiber.Router, svc *auth.Service) {
	for _, p := range svc.Modules().Paths() {
		path := p.ColonPattern()
		for _, rt := range p.Routes {
			h := func(c *fiber.Ctx) error {
				resp := svc.Modules().Handle(rt, request{c})
				return write(c, &resp)
			}
			r.Add(rt.Method, path, h)
			if rt.Method == http.MethodGet {
				r.Add(http.MethodHead, path, h)
			}
		}
		allow := p.Allow // the same table, so the same Allow, as net/http and gin
		r.All(path, func(c *fiber.Ctx) error {
			resp := svc.Modules().MethodNotAllowed(request{c}, allow)
			return write(c, &resp)
		})
	}
}

// RequireUser lets requests with a valid session through, with the user in
// c.UserContext() (see CurrentUser); others get 401
// {"error":"Not authenticated"}.
//
// A personal API key sent as Authorization: Bearer (auth.Config.APIKeys)
// is let through too; how the request authenticated is in the user
// context (auth.CredentialFromContext).
func RequireUser(svc *auth.Service) fiber.Handler {
	return require(func(r auth.Request) (*user.User, auth.Credential, *auth.Response) {
		return svc.AuthenticateCredential(r, false)
	})
}

// RequireVerifiedEmail is RequireUser for users whose address is verified;
// an unverified one gets 403 {"error":"Email not verified"}.
func RequireVerifiedEmail(svc *auth.Service) fiber.Handler {
	return require(func(r auth.Request) (*user.User, auth.Credential, *auth.Response) {
		return svc.AuthenticateCredential(r, true)
	})
}

// RequireScope is RequireUser for credentials that carry scope: a session
// has every scope, a personal API key those it was created with; a key
// without it gets 403 {"error":"Insufficient scope"}. Behind RequireUser
// it uses what RequireUser found instead of authenticating again.
func RequireScope(svc *auth.Service, scope string) fiber.Handler {
	return require(func(r auth.Request) (*user.User, auth.Credential, *auth.Response) {
		return svc.AuthorizeScope(r, scope)
	})
}

func require(check func(auth.Request) (*user.User, auth.Credential, *auth.Response)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		u, cred, deny := check(request{c})
		if deny != nil {
			return write(c, deny)
		}
		c.SetUserContext(auth.ContextWithCredential(auth.ContextWithUser(c.UserContext(), u), cred))
		return c.Next()
	}
}

// CurrentUser returns the user that RequireUser put in c's user context.
func CurrentUser(c *fiber.Ctx) (*user.User, bool) {
	return auth.UserFromContext(c.UserContext())
}

// RateLimit limits the routes after it with rl (an [*auth.RateLimit] of a
// Service, or an [*auth.RequestLimiter] over a ratelimit.Limiter alone, for
// an app that uses authkit for nothing else): allowed requests get the
// X-RateLimit-* headers, others the same 429 {error, retryAfter} as
// authkit's routes.
func RateLimit(rl auth.LimitChecker) fiber.Handler {
	return func(c *fiber.Ctx) error {
		h, deny := rl.Check(request{c})
		if deny != nil {
			return write(c, deny)
		}
		setHeaders(c, h)
		return c.Next()
	}
}
