package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// Decisions for the framework modules' middleware. Each returns what to
// do; the module only translates: continue with the user, or write the
// response and stop.

// Authenticate returns the signed-in user of r, or the response to send
// instead: 401 {"error":"Not authenticated"} (expiring a dead session
// cookie), 403 two_factor_required for an account whose grace period of
// Config.RequireTwoFactor is over, or 503 when the store is down.
// RequireUser in every framework module is this call.
func (s *Service) Authenticate(r Request) (*user.User, *Response) {
	return s.authenticate(r, false)
}

// AuthenticateVerified is Authenticate plus a verified address: a user
// whose email is unverified gets 403 {"error":"Email not verified"}.
// RequireVerifiedEmail in every framework module is this call.
func (s *Service) AuthenticateVerified(r Request) (*user.User, *Response) {
	return s.authenticate(r, true)
}

// authenticate is both decisions, done once. The session cookie is read
// and checked without a call (session.Manager.User), so a request with a
// valid session costs the cookie's lookup, its verification and the user
// store's read, and nothing else. Only a request that fails makes the call
// its response needs, from what the check found: a dead cookie is expired
// as Session.User would have, and the status is the one the routes give
// (sessionFailure).
func (s *Service) authenticate(r Request, verified bool) (*user.User, *Response) {
	if key, ok := bearerAPIKey(r); ok { // a personal API key (apikeys.go)
		u, _, resp := s.authenticateAPIKey(r, key, verified)
		return u, resp
	}
	raw, found := r.Cookie(s.sessions.CookieName())
	found = found && raw != ""
	bearer := ""
	if s.cfg.Tokens.Enabled {
		bearer, _ = tokenRequest(r) // a pending token is no access token: 401
	}
	var u *user.User
	err := session.ErrNotAuthenticated
	switch {
	case bearer != "":
		// An access token: the request is in token mode, its cookie is
		// not looked at.
		u, err = s.sessions.AccessUser(r.Context(), bearer)
		found = false
	case found:
		u, err = s.sessions.User(r.Context(), raw)
	}
	overdue := err == nil && s.TwoFactorRequirement(u).Overdue
	if err == nil && (!verified || u.EmailVerified()) && !overdue {
		return u, nil
	}
	v, ctx := s.Visit(r), r.Context()
	if err == nil {
		cond := ErrEmailNotVerified
		if overdue {
			// Config.RequireTwoFactor: the grace period is over.
			cond = ErrTwoFactorRequired
		}
		resp := s.failure(ctx, v, "authenticate", cond)
		return nil, &resp
	}
	if found && errors.Is(err, session.ErrNotAuthenticated) {
		_ = v.sess.Logout(ctx) // expires the dead cookie; never fails
		err = ErrNotAuthenticated
	} else if errors.Is(err, session.ErrNotAuthenticated) {
		err = ErrNotAuthenticated
	}
	resp := s.failure(ctx, v, "session", err) // with a bearer token: its WWW-Authenticate challenge
	return nil, &resp
}

type userKey struct{}

// ContextWithUser returns ctx carrying u, for middleware that hands the
// user to the app's handlers.
func ContextWithUser(ctx context.Context, u *user.User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFromContext returns the user stored by ContextWithUser.
func UserFromContext(ctx context.Context) (*user.User, bool) {
	u, ok := ctx.Value(userKey{}).(*user.User)
	return u, ok && u != nil
}

// ClientIP returns the client address of r as rate limits key it: the
// socket peer, or the X-Forwarded-For entry chosen by Config.Proxies; an
// IPv6 client as its /64.
func (s *Service) ClientIP(r Request) string { return s.clientKey(r) }

// KeyFunc picks the rate-limit key of a request for an app's own limit.
type KeyFunc func(r Request) string

// RateLimit limits an app's own routes with the same store, headers and
// 429 body as authkit's routes.
type RateLimit struct {
	s   *Service
	lim *limiter
	key KeyFunc // nil: the visit's client address
}

// NewRateLimit returns a limit named name (the key prefix; keep it
// distinct from authkit's: "login:ip", "register:ip", ...) of l, keyed by
// key (default: the client address). msg is the 429 text; default "Too
// many requests. Try again later." Its 429 has the code
// "too_many_requests". With the default in-memory store
// (Config.LimitCapacity keys), a new key is limited while the store is
// full, the spec's rule, and the full store is reported as
// EventLimitStoreFull; key with something that costs a client to vary.
func (s *Service) NewRateLimit(name string, l Limit, key KeyFunc, msg string) (*RateLimit, error) {
	if name == "" {
		return nil, fmt.Errorf("auth: rate limit needs a name")
	}
	if l.Max == 0 || l.Window <= 0 {
		return nil, fmt.Errorf("auth: rate limit %s: Max and Window are required", name)
	}
	tooMany := ErrTooManyRequests
	if msg != "" {
		tooMany = tooMany.with(msg, "app:"+name, nil) // an app's own text: a catalog may have "app:NAME"
	}
	// The spec's rule at capacity (new keys limited): the key is the app's
	// choice, by default the client address.
	lim, err := newLimiter(limitSpec{name: "app:" + name, err: tooMany, limit: l}, &s.cfg)
	if err != nil {
		return nil, err
	}
	return &RateLimit{s: s, lim: lim, key: key}, nil
}

// Check counts one attempt for r. It returns the rate-limit headers to add
// to the app's response, or the 429 (or 503 when the store is down) to
// send instead.
func (rl *RateLimit) Check(r Request) (http.Header, *Response) {
	v, ctx := rl.s.Visit(r), r.Context()
	vd, err := rl.s.check(ctx, v, rl.lim, rl.keyOf(v))
	if err != nil {
		resp := rl.s.failure(ctx, v, "rate limit", err)
		return nil, &resp
	}
	h := http.Header{}
	rl.s.rateHeaders(h, vd)
	return h, nil
}

// Attempt counts one attempt for the visit's request, for a limit inside
// a typed method: the rate-limit headers go on the visit ([Visit.Header]),
// and an attempt over the limit fails with the limit's 429 *Error (code
// "too_many_requests", RetryAfter set), a store that is down with an
// error AsError maps to 503 (unless Config.RateLimitFailOpen).
func (rl *RateLimit) Attempt(ctx context.Context, v *Visit) error {
	ctx = v.context(ctx)
	vd, err := rl.s.check(ctx, v, rl.lim, rl.keyOf(v))
	if err != nil {
		return err
	}
	rl.s.rateHeaders(v.header, vd)
	return nil
}

// keyOf is the limit's key for the visit's request.
func (rl *RateLimit) keyOf(v *Visit) string {
	if rl.key == nil {
		return v.ClientIP()
	}
	return rl.key(v.req)
}

// Close stops the background work of the limit's default store.
func (rl *RateLimit) Close() error {
	if rl.lim != nil && rl.lim.closer != nil {
		return rl.lim.closer.Close()
	}
	return nil
}
