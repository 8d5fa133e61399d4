package auth

import (
	"context"
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
	handle  func(ctx context.Context, s *Service, v *Visit) Response
	feature Feature   // the feature the route belongs to; "" for the always-on ones
	needs   needStore // registered only with this store configured
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

// needStore names an optional store a route needs.
type needStore uint8

const (
	none           needStore = iota
	sessionRecords           // Config.Sessions
	trustedDevices           // Config.TrustedDevices
	emailCodes               // Config.EmailCode.Enabled (and so user.EmailCodes)
)

// has reports whether the configuration has store st.
func (cfg *Config) has(st needStore) bool {
	switch st {
	case sessionRecords:
		return cfg.Sessions != nil
	case trustedDevices:
		return cfg.TrustedDevices != nil
	case emailCodes:
		return cfg.EmailCode.Enabled
	}
	return true
}

var routes = []Route{
	// The spec's routes (docs/api.md, Routes).
	{http.MethodPost, "/api/2fa/setup", setupTwoFactorRoute, FeatureTwoFactor, none},
	{http.MethodPost, "/api/2fa/confirm", confirmTwoFactorRoute, FeatureTwoFactor, none},
	{http.MethodPost, "/api/login", loginRoute, "", none},
	{http.MethodPost, "/api/auth/login", loginRoute, "", none},
	{http.MethodPost, "/api/2fa/verify", verifyTwoFactorRoute, "", none},
	{http.MethodPost, "/api/2fa/recover", recoverTwoFactorRoute, "", none},
	{http.MethodPost, "/api/2fa/regenerate-codes", regenerateCodesRoute, FeatureTwoFactor, none},
	{http.MethodPost, "/api/2fa/disable", disableTwoFactorRoute, "", none},
	{http.MethodPost, "/api/auth/register", registerRoute, FeatureRegistration, none},
	{http.MethodGet, "/api/auth/verify-email/{token}", verifyEmailRoute, "", none},
	{http.MethodPost, "/api/auth/resend-verification", resendVerificationRoute, "", none},
	{http.MethodPost, "/api/auth/change-email", changeEmailRoute, FeatureEmailChange, none},
	{http.MethodPost, "/api/auth/forgot-password", forgotPasswordRoute, FeaturePasswordReset, none},
	{http.MethodPost, "/api/auth/reset-password/{token}", resetPasswordRoute, FeaturePasswordReset, none},
	// authkit's own (docs/api.md "Routes beyond the spec").
	{http.MethodPost, "/api/auth/logout", logoutRoute, "", none},
	{http.MethodPost, "/api/auth/logout-all", logoutAllRoute, "", none},
	{http.MethodGet, "/api/auth/me", meRoute, "", none},
	{http.MethodPost, "/api/auth/change-password", changePasswordRoute, FeaturePasswordChange, none},
	{http.MethodPost, "/api/auth/confirm-password", confirmPasswordRoute, "", none},
	{http.MethodGet, "/api/auth/sessions", listSessionsRoute, "", sessionRecords},
	{http.MethodDelete, "/api/auth/sessions/{id}", endSessionRoute, "", sessionRecords},
	{http.MethodGet, "/api/2fa/trusted-devices", trustedDevicesRoute, "", trustedDevices},
	{http.MethodDelete, "/api/2fa/trusted-devices/{id}", forgetTrustedDeviceRoute, "", trustedDevices},
	{http.MethodPost, "/api/2fa/email-code", sendEmailCodeRoute, "", emailCodes},
	{http.MethodPost, "/api/2fa/email-code/verify", verifyEmailCodeRoute, "", emailCodes},
}

// Routes lists every endpoint of the features the Service has on
// (Config.Disable): a switched-off route is not listed, so no framework
// module registers it and it answers 404. The session routes are listed
// only with Config.Sessions, the trusted-device routes only with
// Config.TrustedDevices, the email-code routes only with
// Config.EmailCode.Enabled. The slice is the caller's.
func (s *Service) Routes() []Route {
	var out []Route
	for _, rt := range routes {
		if s.enabled(rt.feature) == nil && s.cfg.has(rt.needs) {
			out = append(out, rt)
		}
	}
	return out
}

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
	for _, rt := range s.Routes() {
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
	v := s.Visit(r)
	ctx := r.Context()
	if s.cfg.Observer != nil {
		var end func(status int)
		ctx, end = s.startObserved(ctx, Flow{Name: rt.Flow(), Route: rt}) // the typed method the route calls is this flow
		defer func() { end(resp.Status) }()                               // after the recover below: a panic ends as 500
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "authkit: panic in flow", "route", rt.Pattern, "panic", p)
			resp = s.respond(&Visit{}, http.StatusInternalServerError, errorBody{Error: ErrInternal.Message, Code: ErrInternal.Code})
		}
	}()
	if !safeMethod(r.Method()) {
		if err := s.CheckOrigin(r); err != nil {
			return s.failure(ctx, v, "origin", err)
		}
	}
	return rt.handle(ctx, s, v)
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// CheckOrigin is the cross-origin protection of the JSON routes, for an
// app's own state-changing handlers (its form posts): http.
// CrossOriginProtection's check on the headers that decide it,
// Sec-Fetch-Site, else Origin against Host, with Config.TrustedOrigins
// allowed. Requests without either (curl, server-to-server) pass. It
// returns ErrCrossOrigin for a request to refuse (403). Safe methods (GET,
// HEAD, OPTIONS) always pass.
func (s *Service) CheckOrigin(r Request) error {
	if safeMethod(r.Method()) {
		return nil
	}
	if err := s.checkOrigin(r); err != nil {
		return ErrCrossOrigin
	}
	return nil
}

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
	return s.errorResponse(ErrNotFound)
}

// MethodNotAllowed answers a known path with the wrong method as JSON.
func (s *Service) MethodNotAllowed(r Request, allow string) Response {
	resp := s.errorResponse(ErrMethodNotAllowed)
	if allow != "" {
		resp.Header.Set("Allow", allow)
	}
	return resp
}

// Error is an authkit error response, {"error": ..., "code": ...} with the
// headers of every authkit answer, for the errors a framework raises before
// a route runs (fiber's body limit, a malformed request). Statuses authkit
// answers itself keep its own texts and codes whatever msg says: 404 "Not
// found", 405 "Method not allowed", 413 "Request body too large", and every
// 5xx "Internal server error" (a framework's text for a server error is
// never sent). Any other status has the code "request_rejected" and msg, or
// the status text when msg is empty.
func (s *Service) Error(status int, msg string) Response {
	switch {
	case status == http.StatusNotFound:
		return s.errorResponse(ErrNotFound)
	case status == http.StatusMethodNotAllowed:
		return s.errorResponse(ErrMethodNotAllowed)
	case status == http.StatusRequestEntityTooLarge:
		return s.errorResponse(ErrBodyTooLarge)
	case status >= 500:
		e := *ErrInternal
		e.Status = status
		return s.errorResponse(&e)
	case msg == "":
		msg = http.StatusText(status)
	}
	e := ErrRequestRejected.with(msg, "", nil)
	e.Status = status
	return s.errorResponse(e)
}

// errorResponse is e as an answer of its own: no visit, no cookies.
func (s *Service) errorResponse(e *Error) Response {
	r := s.json(e.Status, errorBody{Error: e.Message, Code: e.Code})
	retryAfterUnavailable(&r)
	return r
}
