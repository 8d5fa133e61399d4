package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/authkit-go/authkit/core/ratelimit"
)

// Limit is one rate limit: at most Max attempts per Window for one key.
// The zero Limit means the default from spec section 8; Max < 0 switches
// the limit off.
type Limit struct {
	Max    int
	Window time.Duration
}

// Off is a Limit that never limits.
var Off = Limit{Max: -1}

// Limits are the rate limits of the flows, each a separate limiter with its
// own key (spec section 8). Zero fields take the defaults shown.
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
	return l
}

// limiter is one configured limit. A nil *limiter never limits.
type limiter struct {
	name   string // key prefix, e.g. "login:ip"
	l      *ratelimit.Limiter
	err    *Error // the 429
	closer io.Closer
}

func newLimiter(name string, tooMany *Error, lim Limit, newStore func(name string) ratelimit.Store, now func() time.Time) (*limiter, error) {
	if lim.Max < 0 {
		return nil, nil
	}
	var store ratelimit.Store
	var closer io.Closer
	if newStore != nil {
		store = newStore(name)
	} else {
		ms := ratelimit.NewMemoryStore(ratelimit.MemoryConfig{Now: now})
		store, closer = ms, ms
	}
	l, err := ratelimit.New(ratelimit.Config{MaxAttempts: lim.Max, Window: lim.Window, Store: store, Now: now})
	if err != nil {
		return nil, fmt.Errorf("auth: limit %s: %w", name, err)
	}
	return &limiter{name: name, l: l, err: tooMany, closer: closer}, nil
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
	checked bool
}

// attempt counts one attempt for key. A store failure fails closed (an
// error wrapping errBackend: 503) unless RateLimitFailOpen is set.
func (s *Service) attempt(v *Visit, lm *limiter, part string) (verdict, error) {
	if lm == nil {
		return verdict{}, nil
	}
	res, err := lm.l.Attempt(v.ctx, lm.key(part))
	if err != nil {
		if s.cfg.RateLimitFailOpen {
			s.log.WarnContext(v.ctx, "authkit: rate-limit store failed; allowing (fail open)", "limit", lm.name, "err", err)
			return verdict{}, nil
		}
		return verdict{}, fmt.Errorf("rate limit %s: %w", lm.name, errors.Join(errBackend, err))
	}
	return verdict{res: res, limited: !res.Allowed, checked: true}, nil
}

// check counts one attempt for key and returns the limit's 429 when the
// key is over it. A checked attempt's headers go on the visit.
func (s *Service) check(v *Visit, lm *limiter, part string) (verdict, error) {
	vd, err := s.attempt(v, lm, part)
	if err != nil {
		return vd, err
	}
	if vd.limited {
		return vd, s.tooMany(v, lm, vd)
	}
	return vd, nil
}

func (s *Service) resetLimit(v *Visit, lm *limiter, part string) {
	if lm == nil {
		return
	}
	if err := lm.l.Reset(v.ctx, lm.key(part)); err != nil {
		s.log.WarnContext(v.ctx, "authkit: rate-limit reset failed", "limit", lm.name, "err", err)
	}
}

// rateHeaders sets the optional headers of spec section 7 from vd.
func (s *Service) rateHeaders(h http.Header, vd verdict) {
	if !vd.checked {
		return
	}
	h.Set("X-RateLimit-Remaining", strconv.Itoa(vd.res.Remaining))
	h.Set("X-RateLimit-Reset", isoTime(vd.res.ResetAt))
	if vd.limited {
		// At least one second: a refused request never says "retry now",
		// even when the store's clock (Redis) runs ahead of this server's.
		secs := max(int64(vd.res.RetryAfter(s.now())/time.Second), 1)
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
	}
}

// tooMany is the 429 of lm for verdict vd: the limit's error with the
// window's end as RetryAfter (spec rule 13) and its headers.
func (s *Service) tooMany(v *Visit, lm *limiter, vd verdict) *Error {
	s.audit(v, Event{Type: EventRateLimited, Detail: lm.name})
	e := *lm.err
	e.RetryAfter = vd.res.ResetAt
	e.limit = http.Header{}
	s.rateHeaders(e.limit, vd)
	return &e
}
