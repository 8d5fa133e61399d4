package auth

import (
	"context"
	"fmt"
	"net/http"

	"github.com/authkit-go/authkit/core/user"
)

// Decisions for the framework modules' middleware. Each returns what to
// do; the module only translates: continue with the user, or write the
// response and stop.

// Authenticate returns the signed-in user of r, or the response to send
// instead: 401 {"error":"Not authenticated"} (expiring a dead session
// cookie), or 503 when the store is down. RequireUser in every framework
// module is this call.
//
// A request with a valid session costs the cookie's lookup, its
// verification and the user store's read, and nothing else: the state a
// response needs (headers, cookies) is made only for a request that fails,
// which is then checked again on the full path so that every failure
// answers exactly as the routes do.
func (s *Service) Authenticate(r Request) (*user.User, *Response) {
	if u := s.sessionUser(r); u != nil {
		return u, nil
	}
	return s.currentUser(s.newCall(r))
}

// AuthenticateVerified is Authenticate plus a verified address: a user
// whose email is unverified gets 403 {"error":"Email not verified"}.
// RequireVerifiedEmail in every framework module is this call.
func (s *Service) AuthenticateVerified(r Request) (*user.User, *Response) {
	if u := s.sessionUser(r); u != nil && u.EmailVerified() {
		return u, nil
	}
	c := s.newCall(r)
	u, fail := s.currentUser(c)
	if fail != nil {
		return nil, fail
	}
	if !u.EmailVerified() {
		resp := s.fail(c, http.StatusForbidden, "Email not verified")
		return nil, &resp
	}
	return u, nil
}

// sessionUser is the success path of Authenticate: the user of r's
// session when it is valid, else nil. It writes nothing: the full path
// that follows a failure expires a dead cookie.
func (s *Service) sessionUser(r Request) *user.User {
	v, ok := r.Cookie(s.sessions.CookieName())
	if !ok {
		return nil
	}
	u, err := s.sessions.User(r.Context(), v)
	if err != nil {
		return nil
	}
	return u
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
	key KeyFunc
}

// NewRateLimit returns a limit named name (the key prefix; keep it
// distinct from authkit's: "login:ip", "register:ip", ...) of l, keyed by
// key (default: the client address). msg is the 429 text; default "Too
// many requests. Try again later."
func (s *Service) NewRateLimit(name string, l Limit, key KeyFunc, msg string) (*RateLimit, error) {
	if name == "" {
		return nil, fmt.Errorf("auth: rate limit needs a name")
	}
	if l.Max == 0 || l.Window <= 0 {
		return nil, fmt.Errorf("auth: rate limit %s: Max and Window are required", name)
	}
	if msg == "" {
		msg = msgTooManyRequests
	}
	lim, err := newLimiter("app:"+name, msg, l, s.cfg.LimitStore, s.now)
	if err != nil {
		return nil, err
	}
	if key == nil {
		key = s.ClientIP
	}
	return &RateLimit{s: s, lim: lim, key: key}, nil
}

// Check counts one attempt for r. It returns the rate-limit headers to add
// to the app's response, or the 429 (or 503 when the store is down) to
// send instead.
func (rl *RateLimit) Check(r Request) (http.Header, *Response) {
	c := rl.s.newCall(r)
	v, err := rl.s.attempt(c, rl.lim, rl.key(r))
	if err != nil {
		resp := rl.s.internal(c, "rate limit", err)
		return nil, &resp
	}
	if v.limited {
		resp := rl.s.tooMany(c, rl.lim, v)
		return nil, &resp
	}
	h := http.Header{}
	rl.s.rateHeaders(h, v)
	return h, nil
}

// Close stops the background work of the limit's default store.
func (rl *RateLimit) Close() error {
	if rl.lim != nil && rl.lim.closer != nil {
		return rl.lim.closer.Close()
	}
	return nil
}
