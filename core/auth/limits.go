package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/authkit-go/authkit/core/ratelimit"
)

// Limit is one rate limit: at most Max attempts per Window for one key.
// The zero Limit means the default shown in [Limits]; Max < 0 switches
// the limit off.
type Limit struct {
	Max    int
	Window time.Duration
}

// Off is a Limit that never limits (Max < 0): Limits{Register: auth.Off}.
// [LockoutOff] is the same for the account lock-out.
var Off = Limit{Max: -1}

// Limits are the rate limits of the flows, each a separate limiter with its
// own key (docs/api.md, Rate limits). Zero fields take the defaults shown.
type Limits struct {
	LoginIP    Limit // Default: 10 per 15 minutes, key login:ip:{ip}.
	LoginEmail Limit // Default: 5 per 15 minutes, key login:email:{email}.
	Register   Limit // Default: 3 per hour, key register:ip:{ip}.
	ResetIP    Limit // Default: 5 per 15 minutes, key reset:ip:{ip}.
	ResetEmail Limit // Default: 3 per 15 minutes, key reset:email:{email} (the spec's table; its code example uses 5).
	Resend     Limit // Default: 3 per 15 minutes, key resend:{user id}.
	TwoFactor  Limit // Default: 5 per 5 minutes, key 2fa:{user id}: verify and recover share it.
	// Password limits re-entry of the current password by a signed-in
	// user (disable 2FA, change email, change password).
	// Default: 5 per 15 minutes, key password:{user id}.
	Password Limit
	// EmailCode limits the codes mailed for the second step of a login
	// (Config.EmailCode), so the route cannot flood a mailbox. Checking a
	// code counts against TwoFactor, like a TOTP code.
	// Default: 3 per 15 minutes, key email-code:{user id}.
	EmailCode Limit
	// NewSignInNotice limits the "New sign-in" mails of one account
	// (FeatureNewDeviceNotice): a client that drops cookies signs in from
	// a "new browser" every time. Past it a sign-in is audited but not
	// mailed; the mail that went says that further sign-ins within the
	// window get none of their own. It refuses nothing.
	// Default: 1 per hour, key new-sign-in:{user id}.
	NewSignInNotice Limit
	// EmailSignInIP limits the sign-in mails asked for from one client
	// address (Config.EmailSignIn). Default: 5 per 15 minutes, key
	// email-sign-in:ip:{ip}.
	EmailSignInIP Limit
	// EmailSignInEmail limits the sign-in mails to one address, silently
	// like ResetEmail: past it the answer is the same and no mail goes.
	// Default: 3 per 15 minutes, key email-sign-in:email:{email}.
	EmailSignInEmail Limit
	// EmailSignInVerify limits the codes and links tried for one address,
	// whoever tries them, so a 6-digit code cannot be guessed (each try
	// also counts against LoginIP). Default: 5 per 15 minutes, key
	// email-sign-in:verify:{email}; reset by a success.
	EmailSignInVerify Limit
	// APIKey limits the requests authenticated with one personal API key
	// (Config.APIKeys), counted once the key checked out.
	// Default: 600 per minute, key api-key:{key id}.
	APIKey Limit
}

func (l Limits) withDefaults() Limits {
	def := func(got *Limit, max int, window time.Duration) {
		if got.Max == 0 {
			got.Max = max
		}
		if got.Window == 0 {
			got.Window = window
		}
	}
	def(&l.LoginIP, 10, 15*time.Minute)
	def(&l.LoginEmail, 5, 15*time.Minute)
	def(&l.Register, 3, time.Hour)
	def(&l.ResetIP, 5, 15*time.Minute)
	def(&l.ResetEmail, 3, 15*time.Minute)
	def(&l.Resend, 3, 15*time.Minute)
	def(&l.TwoFactor, 5, 5*time.Minute)
	def(&l.Password, 5, 15*time.Minute)
	def(&l.EmailCode, 3, 15*time.Minute)
	def(&l.NewSignInNotice, 1, time.Hour)
	def(&l.EmailSignInIP, 5, 15*time.Minute)
	def(&l.EmailSignInEmail, 3, 15*time.Minute)
	def(&l.EmailSignInVerify, 5, 15*time.Minute)
	def(&l.APIKey, 600, time.Minute)
	return l
}

// limits are the limiters of Config.Limits, one per limit, each with its
// own key prefix and store (nil for a limit that is Off).
type limits struct {
	loginIP, loginEmail, register, resetIP, resetEmail, resend, twoFactor, password *limiter
	emailCode, newSignIn, emailSignInIP, emailSignInEmail, emailSignInVerify        *limiter
	apiKey                                                                          *limiter // nil without Config.APIKeys
}

// newLimits builds the limiter of every limit of cfg.Limits, in the
// order of its table: the name (key prefix), the 429, the limit, and
// whether a full store lets a new key through (email keys; see
// limitSpec). On an error, the stores made so far are closed.
func newLimits(cfg *Config) (limits, error) {
	var ls limits
	lim := cfg.Limits
	for _, l := range []struct {
		dst **limiter
		limitSpec
	}{
		{&ls.loginIP, limitSpec{"login:ip", ErrTooManyLogins, lim.LoginIP, false}},
		{&ls.loginEmail, limitSpec{"login:email", ErrTooManyLogins, lim.LoginEmail, true}},
		{&ls.register, limitSpec{"register:ip", ErrTooManyRegistrations, lim.Register, false}},
		{&ls.resetIP, limitSpec{"reset:ip", ErrTooManyResets, lim.ResetIP, false}},
		{&ls.resetEmail, limitSpec{"reset:email", ErrTooManyResets, lim.ResetEmail, true}},
		{&ls.resend, limitSpec{"resend", ErrTooManyResends, lim.Resend, false}},
		{&ls.twoFactor, limitSpec{"2fa", ErrTooManyTwoFactor, lim.TwoFactor, false}},
		{&ls.password, limitSpec{"password", ErrTooManyPasswordEntries, lim.Password, false}},
		{&ls.emailCode, limitSpec{"email-code", ErrTooManyEmailCodes, lim.EmailCode, false}},
		{&ls.newSignIn, limitSpec{"new-sign-in", nil, lim.NewSignInNotice, true}},
		{&ls.emailSignInIP, limitSpec{"email-sign-in:ip", ErrTooManySignInRequests, lim.EmailSignInIP, false}},
		{&ls.emailSignInEmail, limitSpec{"email-sign-in:email", ErrTooManySignInRequests, lim.EmailSignInEmail, true}},
		// Not let through when full: an attacker who filled the store
		// would otherwise guess codes uncounted.
		{&ls.emailSignInVerify, limitSpec{"email-sign-in:verify", ErrTooManyLogins, lim.EmailSignInVerify, false}},
		{&ls.apiKey, limitSpec{"api-key", ErrTooManyAPIKeyRequests, apiKeyLimit(cfg), false}},
	} {
		var err error
		if *l.dst, err = newLimiter(l.limitSpec, cfg); err != nil {
			ls.close()
			return limits{}, err
		}
	}
	return ls, nil
}

// all returns every limiter, nil ones included.
func (ls *limits) all() []*limiter {
	return []*limiter{ls.loginIP, ls.loginEmail, ls.register, ls.resetIP, ls.resetEmail, ls.resend, ls.twoFactor, ls.password, ls.emailCode, ls.newSignIn,
		ls.emailSignInIP, ls.emailSignInEmail, ls.emailSignInVerify, ls.apiKey}
}

// apiKeyLimit is Limits.APIKey, or Off without API keys: no store is made
// for a limit nothing counts.
func apiKeyLimit(cfg *Config) Limit {
	if !cfg.APIKeys.Enabled {
		return Off
	}
	return cfg.Limits.APIKey
}

// close stops the background work of the default in-memory stores.
func (ls *limits) close() error {
	var err error
	for _, l := range ls.all() {
		if l != nil && l.closer != nil {
			err = errors.Join(err, l.closer.Close())
		}
	}
	return err
}

// limiter is one configured limit. A nil *limiter never limits.
type limiter struct {
	name    string // key prefix, e.g. "login:ip"
	l       *ratelimit.Limiter
	err     *Error // the 429
	closer  io.Closer
	refunds bool // the store implements ratelimit.Refunder

	// fullAt is when the last limit_store_full event of this limit was
	// reported (Unix nanoseconds, 0 for never): at most one a minute.
	fullAt atomic.Int64
}

// fullEventInterval is the least time between two limit_store_full events
// of one limit, so that an attacker who keeps a store full cannot flood
// the audit log with them.
const fullEventInterval = time.Minute

// limitSpec is one row of the limit table of New.
type limitSpec struct {
	name  string
	err   *Error // the 429; nil for a limit that refuses nothing (new-sign-in)
	limit Limit
	// allowWhenFull: a new key that a full store refuses is let through
	// uncounted rather than limited. Set for keys an attacker invents for
	// free (email addresses), whose store anyone can fill; see doc.go.
	allowWhenFull bool
}

func newLimiter(ls limitSpec, cfg *Config) (*limiter, error) {
	if ls.limit.Max < 0 {
		return nil, nil
	}
	var store ratelimit.Store
	var closer io.Closer
	if cfg.LimitStore != nil {
		store = cfg.LimitStore(ls.name)
	} else {
		ms := ratelimit.NewMemoryStore(ratelimit.MemoryConfig{Capacity: cfg.LimitCapacity, Now: cfg.Now})
		store, closer = ms, ms
	}
	if cfg.Observer != nil {
		store = observedLimits(store, cfg.Observer)
	}
	l, err := ratelimit.New(ratelimit.Config{
		MaxAttempts: ls.limit.Max, Window: ls.limit.Window, Store: store, Now: cfg.Now, AllowWhenFull: ls.allowWhenFull,
	})
	if err != nil {
		if closer != nil {
			closer.Close()
		}
		return nil, fmt.Errorf("auth: limit %s: %w", ls.name, err)
	}
	_, refunds := store.(ratelimit.Refunder)
	return &limiter{name: ls.name, l: l, err: ls.err, closer: closer, refunds: refunds}, nil
}

// maxKeyPart is the longest key part used as it is; longer ones are hashed
// so that no client can make a store hold large keys.
const maxKeyPart = 128

func (lm *limiter) key(part string) string {
	if len(part) > maxKeyPart {
		sum := sha256.Sum256([]byte(part))
		part = "sha256:" + hex.EncodeToString(sum[:])
	}
	return lm.name + ":" + part
}

// verdict is the outcome of one limit check.
type verdict struct {
	res     ratelimit.Result
	limited bool
	checked bool // the attempt was counted, or refused: res may go in headers
}

// attempt counts one attempt for key. A store failure fails closed (an
// error wrapping errBackend: 503) unless RateLimitFailOpen is set. A full
// store is reported (EventLimitStoreFull); whether its refusal limits is
// the limit's rule (limitSpec.allowWhenFull).
func (s *Service) attempt(ctx context.Context, v *Visit, lm *limiter, part string) (verdict, error) {
	if lm == nil {
		return verdict{}, nil
	}
	res, err := lm.l.Attempt(ctx, lm.key(part))
	if err != nil {
		if s.cfg.RateLimitFailOpen {
			s.log.WarnContext(ctx, "authkit: rate-limit store failed; allowing (fail open)", "limit", lm.name, "err", err)
			return verdict{}, nil
		}
		return verdict{}, fmt.Errorf("rate limit %s: %w", lm.name, errors.Join(errBackend, err))
	}
	if res.StoreFull {
		s.storeFull(ctx, v, lm)
		if res.Allowed {
			return verdict{res: res}, nil // not counted: nothing to show
		}
	}
	return verdict{res: res, limited: !res.Allowed, checked: true}, nil
}

// storeFull reports that lm's store is full: an EventLimitStoreFull, at
// most one per limit per fullEventInterval.
func (s *Service) storeFull(ctx context.Context, v *Visit, lm *limiter) {
	now := s.now().UnixNano()
	last := lm.fullAt.Load()
	if last != 0 && now-last < int64(fullEventInterval) {
		return
	}
	if !lm.fullAt.CompareAndSwap(last, now) {
		return // another request reports it
	}
	s.audit(ctx, v, Event{Type: EventLimitStoreFull, Detail: lm.name})
}

// refundLimit gives back the attempt vd counted for key part (see
// ratelimit.Refunder), and reports whether the store took it back. A store
// error is logged: the attempt then stays counted.
func (s *Service) refundLimit(ctx context.Context, v *Visit, lm *limiter, part string, vd verdict) bool {
	if lm == nil || !vd.checked || !lm.refunds {
		return false
	}
	if err := lm.l.Refund(ctx, lm.key(part), vd.res); err != nil {
		s.log.WarnContext(ctx, "authkit: rate-limit refund failed", "limit", lm.name, "err", err)
		return false
	}
	return true
}

// check counts one attempt for key and returns the limit's 429 when the
// key is over it. A checked attempt's headers go on the visit.
func (s *Service) check(ctx context.Context, v *Visit, lm *limiter, part string) (verdict, error) {
	vd, err := s.attempt(ctx, v, lm, part)
	if err != nil {
		return vd, err
	}
	if vd.limited {
		return vd, s.tooMany(ctx, v, lm, vd)
	}
	return vd, nil
}

// checkShown is check for a flow that goes on when it is let through: the
// limit's state is then reported in v's headers (a refusal reports its
// own).
func (s *Service) checkShown(ctx context.Context, v *Visit, lm *limiter, part string) error {
	vd, err := s.check(ctx, v, lm, part)
	if err != nil {
		return err
	}
	s.rateHeaders(v.header, vd)
	return nil
}

func (s *Service) resetLimit(ctx context.Context, v *Visit, lm *limiter, part string) {
	if lm == nil {
		return
	}
	if err := lm.l.Reset(ctx, lm.key(part)); err != nil {
		s.log.WarnContext(ctx, "authkit: rate-limit reset failed", "limit", lm.name, "err", err)
	}
}

// rateHeaders sets the rate-limit headers (docs/api.md, Rate limits) from vd.
func (s *Service) rateHeaders(h http.Header, vd verdict) {
	if vd.checked {
		limitHeaders(h, vd.res, vd.limited, s.now())
	}
}

// limitHeaders sets the rate-limit headers of an attempt's result res at
// now: Retry-After too when the attempt was limited.
func limitHeaders(h http.Header, res ratelimit.Result, limited bool, now time.Time) {
	h.Set("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
	h.Set("X-RateLimit-Reset", isoTime(res.ResetAt))
	if limited {
		// At least one second: a refused request never says "retry now",
		// even when the store's clock (Redis) runs ahead of this server's.
		secs := max(int64(res.RetryAfter(now)/time.Second), 1)
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
	}
}

// tooMany is the 429 of lm for verdict vd: the limit's error with the
// window's end as RetryAfter (docs/api.md, Rate limits) and its headers.
func (s *Service) tooMany(ctx context.Context, v *Visit, lm *limiter, vd verdict) *Error {
	s.audit(ctx, v, Event{Type: EventRateLimited, Detail: lm.name})
	e := *lm.err
	e.RetryAfter = vd.res.ResetAt
	e.limit = http.Header{}
	s.rateHeaders(e.limit, vd)
	for k, vs := range e.limit { // an app's own page writes them with Visit.WriteHeaders
		v.header[k] = vs
	}
	return &e
}
