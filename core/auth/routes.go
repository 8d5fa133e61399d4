package auth

import (
	"net/http"
	"net/url"
	"strings"
)

// Route is one authkit endpoint. Framework modules register each route's
// Pattern for its Method and call Handle with the neutral request.
type Route struct {
	Method string
	// Pattern is the path in net/http ServeMux form, with parameters as
	// {name}: "/api/auth/verify-email/{token}". See [Route.ColonPattern].
	Pattern string
	handle  func(s *Service, c *call) Response
}

// ColonPattern is Pattern with parameters written :name, the form gin and
// fiber use.
func (r Route) ColonPattern() string {
	p := r.Pattern
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			return p
		}
		j := strings.IndexByte(p[i:], '}')
		if j < 0 {
			return p
		}
		p = p[:i] + ":" + p[i+1:i+j] + p[i+j+1:]
	}
}

var routes = []Route{
	// Spec section 4.
	{http.MethodPost, "/api/2fa/setup", (*Service).setup2FA},
	{http.MethodPost, "/api/2fa/confirm", (*Service).confirm2FA},
	{http.MethodPost, "/api/login", (*Service).login},
	{http.MethodPost, "/api/auth/login", (*Service).login},
	{http.MethodPost, "/api/2fa/verify", (*Service).verify2FA},
	{http.MethodPost, "/api/2fa/recover", (*Service).recover2FA},
	{http.MethodPost, "/api/2fa/regenerate-codes", (*Service).regenerateCodes},
	{http.MethodPost, "/api/2fa/disable", (*Service).disable2FA},
	{http.MethodPost, "/api/auth/register", (*Service).registerUser},
	{http.MethodGet, "/api/auth/verify-email/{token}", (*Service).verifyEmail},
	{http.MethodPost, "/api/auth/resend-verification", (*Service).resendVerification},
	{http.MethodPost, "/api/auth/change-email", (*Service).changeEmail},
	{http.MethodPost, "/api/auth/forgot-password", (*Service).forgotPassword},
	{http.MethodPost, "/api/auth/reset-password/{token}", (*Service).resetPassword},
	// authkit's own (DESIGN.md "Routes beyond the spec").
	{http.MethodPost, "/api/auth/logout", (*Service).logout},
	{http.MethodPost, "/api/auth/logout-all", (*Service).logoutAll},
	{http.MethodGet, "/api/auth/me", (*Service).me},
	{http.MethodPost, "/api/auth/change-password", (*Service).changePassword},
}

// Routes lists every endpoint. The slice is the caller's.
func (s *Service) Routes() []Route { return append([]Route(nil), routes...) }

// Path is one route path with every route on it and the Allow header value
// a 405 on that path carries.
type Path struct {
	Pattern string // ServeMux form, as Route.Pattern
	Routes  []Route
	Allow   string // e.g. "POST", or "GET, HEAD"
}

// ColonPattern is Pattern with parameters written :name (gin, fiber).
func (p Path) ColonPattern() string { return Route{Pattern: p.Pattern}.ColonPattern() }

// Paths groups Routes by path, in order, for modules that answer the other
// methods of a path with MethodNotAllowed.
func (s *Service) Paths() []Path {
	var out []Path
	index := map[string]int{}
	for _, rt := range routes {
		i, ok := index[rt.Pattern]
		if !ok {
			i = len(out)
			index[rt.Pattern] = i
			out = append(out, Path{Pattern: rt.Pattern})
		}
		out[i].Routes = append(out[i].Routes, rt)
	}
	for i := range out {
		var methods []string
		for _, rt := range out[i].Routes {
			methods = append(methods, rt.Method)
			if rt.Method == http.MethodGet {
				methods = append(methods, http.MethodHead)
			}
		}
		out[i].Allow = strings.Join(methods, ", ")
	}
	return out
}

// Handle runs route rt for r. It never panics: a panic in a flow is logged
// and answered 500.
func (s *Service) Handle(rt Route, r Request) (resp Response) {
	c := s.newCall(r)
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(c.ctx, "authkit: panic in flow", "route", rt.Pattern, "panic", p)
			resp = s.fail(&call{}, http.StatusInternalServerError, msgInternal)
		}
	}()
	if !safeMethod(r.Method()) {
		if err := s.checkOrigin(r); err != nil {
			return s.fail(c, http.StatusForbidden, msgCrossOrigin)
		}
	}
	return rt.handle(s, c)
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// checkOrigin is http.CrossOriginProtection's check on the headers that
// decide it: Sec-Fetch-Site, else Origin against Host. Requests without
// either (curl, server-to-server) pass.
func (s *Service) checkOrigin(r Request) error {
	hr := &http.Request{Method: r.Method(), Host: r.Host(), Header: http.Header{}, URL: &url.URL{Path: "/"}}
	for _, h := range []string{"Sec-Fetch-Site", "Origin"} {
		if v := r.Header(h); v != "" {
			hr.Header.Set(h, v)
		}
	}
	return s.origins.Check(hr)
}

// NotFound answers an unknown path under authkit's prefix as JSON.
func (s *Service) NotFound(r Request) Response {
	return s.json(http.StatusNotFound, map[string]string{"error": msgNotFound})
}

// MethodNotAllowed answers a known path with the wrong method as JSON.
func (s *Service) MethodNotAllowed(r Request, allow string) Response {
	resp := s.json(http.StatusMethodNotAllowed, map[string]string{"error": msgMethodNotAllowed})
	if allow != "" {
		resp.Header.Set("Allow", allow)
	}
	return resp
}

// Error is an authkit error response, {"error": ...} with the headers of
// every authkit answer, for the errors a framework raises before a route
// runs (fiber's body limit, a malformed request). Statuses authkit answers
// itself keep its own texts whatever msg says: 404 "Not found", 405
// "Method not allowed", 413 "Request body too large", and every 5xx
// "Internal server error" (a framework's text for a server error is never
// sent). An empty msg gives the status text.
func (s *Service) Error(status int, msg string) Response {
	switch {
	case status == http.StatusNotFound:
		msg = msgNotFound
	case status == http.StatusMethodNotAllowed:
		msg = msgMethodNotAllowed
	case status == http.StatusRequestEntityTooLarge:
		msg = msgBodyTooLarge
	case status >= 500:
		msg = msgInternal
	case msg == "":
		msg = http.StatusText(status)
	}
	r := s.json(status, map[string]string{"error": msg})
	retryAfterUnavailable(&r)
	return r
}
