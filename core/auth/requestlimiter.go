package auth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/authkit-go/authkit/core/clientip"
	"github.com/authkit-go/authkit/core/ratelimit"
)

// LimitChecker is what the framework modules' rate-limit middleware
// (RateLimit in nethttpauth, ginauth and fiberauth) asks of a limit: count
// one attempt for a request and say what to add to the answer, or what to
// answer instead. [*RateLimit] (an app's limit on a Service's store) and
// [*RequestLimiter] (a limit on a [ratelimit.Limiter] alone) are both one.
type LimitChecker interface {
	Check(r Request) (http.Header, *Response)
}

// RequestLimiterConfig configures a [RequestLimiter]. Limiter and Name are
// required.
type RequestLimiterConfig struct {
	// Limiter counts the attempts: its MaxAttempts, Window and Store.
	Limiter *ratelimit.Limiter

	// Name prefixes every key ("NAME:KEY"), so that limits sharing one
	// store never count each other's attempts.
	Name string

	// Key picks a request's key. Default: the client address as authkit's
	// own limits key it (an IPv6 client as its /64), behind the proxies of
	// Proxies.
	Key KeyFunc

	// Proxies decides the client address of the default Key (TRUST_PROXY's
	// syntax: clientip.Parse). Default: trust no proxy, the socket peer is
	// the client.
	Proxies *clientip.Resolver

	// Message is the 429's text. Default: "Too many requests. Try again
	// later." The code is always "too_many_requests".
	Message string

	// FailOpen lets a request through when the limiter's store fails (its
	// error is logged). Default false: the request gets 503
	// service_unavailable with Retry-After, as authkit's own routes do
	// without Config.RateLimitFailOpen.
	FailOpen bool

	// Logger receives store failures. Default: slog.Default().
	Logger *slog.Logger

	// Now is the clock of Retry-After. Default: time.Now.
	Now func() time.Time
}

// RequestLimiter limits an app's routes with a [ratelimit.Limiter] alone:
// no Service, no user store, no secrets. It answers exactly as authkit's
// routes do: X-RateLimit-Remaining and X-RateLimit-Reset on every counted
// request; 429 {"error", "code": "too_many_requests", "retryAfter"} with
// Retry-After when the limit is reached (and when the store is full of
// other keys, the ratelimit package's rule unless the Limiter allows when
// full); 503 when the store fails, unless FailOpen. Texts are English: an
// app that wants them translated uses [Service.NewRateLimit], whose
// answers follow the Visit's language.
type RequestLimiter struct {
	lim      *ratelimit.Limiter
	name     string
	key      KeyFunc
	proxies  *clientip.Resolver
	tooMany  *Error
	failOpen bool
	log      *slog.Logger
	now      func() time.Time
}

// NewRequestLimiter returns the limiter cfg describes, or an error naming
// what cfg lacks.
func NewRequestLimiter(cfg RequestLimiterConfig) (*RequestLimiter, error) {
	var missing []error
	if cfg.Limiter == nil {
		missing = append(missing, errors.New("the Limiter is required"))
	}
	if cfg.Name == "" {
		missing = append(missing, errors.New("a Name is required"))
	}
	if err := errors.Join(missing...); err != nil {
		return nil, fmt.Errorf("auth: request limiter: %w", err)
	}
	l := &RequestLimiter{
		lim: cfg.Limiter, name: cfg.Name, key: cfg.Key, proxies: cfg.Proxies,
		tooMany: ErrTooManyRequests, failOpen: cfg.FailOpen, log: cfg.Logger, now: cfg.Now,
	}
	if l.proxies == nil {
		l.proxies = clientip.New()
	}
	if cfg.Message != "" {
		l.tooMany = ErrTooManyRequests.with(cfg.Message, "app:"+cfg.Name, nil)
	}
	if l.log == nil {
		l.log = slog.Default()
	}
	if l.now == nil {
		l.now = time.Now
	}
	return l, nil
}

// Check counts one attempt for r. It returns the rate-limit headers to add
// to the app's answer, or the 429 (or 503) to send instead.
func (l *RequestLimiter) Check(r Request) (http.Header, *Response) {
	key := (&limiter{name: l.name}).key(l.keyOf(r)) // "NAME:KEY", a long key hashed
	res, err := l.lim.Attempt(r.Context(), key)
	if err != nil {
		l.log.ErrorContext(r.Context(), "authkit: rate-limit store failed", "limit", l.name, "err", err)
		if l.failOpen {
			return http.Header{}, nil
		}
		resp := jsonResponse(ErrUnavailable.Status, errorBody{Error: ErrUnavailable.Message, Code: ErrUnavailable.Code})
		retryAfterUnavailable(&resp)
		return nil, &resp
	}
	h := http.Header{}
	limitHeaders(h, res, !res.Allowed, l.now())
	if res.Allowed {
		return h, nil
	}
	resp := jsonResponse(l.tooMany.Status, errorBody{Error: l.tooMany.Message, Code: l.tooMany.Code, RetryAfter: isoTime(res.ResetAt)})
	for k, vs := range h {
		resp.Header[k] = vs
	}
	return nil, &resp
}

// keyOf is r's key, without the limiter's name.
func (l *RequestLimiter) keyOf(r Request) string {
	if l.key != nil {
		return l.key(r)
	}
	return clientKeyOf(l.proxies.ClientIP(r.RemoteAddr(), splitHeader(r.Header("X-Forwarded-For"))))
}
