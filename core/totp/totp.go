package totp

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
)

// Defaults and limits of [Config] (the spec's defaults; see the package doc).
const (
	// DefaultDigits is the code length when Config.Digits is zero.
	DefaultDigits = 6
	// DefaultPeriod is the step length when Config.Period is zero.
	DefaultPeriod = 30 * time.Second
	// DefaultWindow is the number of steps accepted on each side of the
	// current one when Config.Window is zero.
	DefaultWindow = 1
	// MaxWindow is the largest Config.Window that New accepts. It bounds the
	// work of one Match (2*Window+1 HMACs) and how long a code stays valid.
	MaxWindow = 10
	// SecretBytes is how many random bytes GenerateSecret draws (160 bits,
	// the length RFC 4226 recommends). They encode to 32 base32 characters.
	SecretBytes = 20
)

var (
	// ErrInvalidCode is returned by Match when the code is malformed (not
	// exactly Digits ASCII digits) or matches no step in the window.
	ErrInvalidCode = errors.New("totp: invalid code")

	// ErrCodeUsed is returned by Match when the code is right but its step,
	// or the current step, is at or below the last accepted step: a replay.
	ErrCodeUsed = errors.New("totp: code already used")

	// ErrInvalidSecret is wrapped by the errors of Match and Code when the
	// secret is not base32 (RFC 4648). It indicates a corrupt stored secret,
	// never a wrong code.
	ErrInvalidSecret = errors.New("totp: invalid secret")

	// ErrInvalidConfig is wrapped by the errors of New.
	ErrInvalidConfig = errors.New("totp: invalid config")
)

// Config configures a [TOTP]. Every field is optional: its zero value means
// the documented default, which is the spec's (6 digits, 30 seconds, 1 step).
type Config struct {
	// Digits is the code length: 6 or 8. Default: 6.
	Digits int

	// Period is the length of a time step, in whole seconds, at least one
	// second. Default: 30 seconds.
	Period time.Duration

	// Window is how many steps before and after the current one are also
	// accepted, at most MaxWindow. Default: 1. Because zero means the
	// default, a negative value (-1) means 0: only the current step is
	// accepted. This follows net.Dialer.KeepAlive, where zero means the
	// default and a negative value turns the feature off.
	Window int

	// Now returns the current time. Default: time.Now.
	Now func() time.Time

	// Rand is the source of GenerateSecret. Default: crypto/rand.Reader.
	Rand io.Reader
}

// TOTP generates secrets and checks codes under one configuration (RFC 6238,
// HMAC-SHA-1, T0 = 0). It is safe for concurrent use when Config.Now and
// Config.Rand are.
type TOTP struct {
	digits otp.Digits
	period int64 // seconds
	window int64
	now    func() time.Time
	rand   io.Reader
}

// New returns a TOTP for cfg, with defaults filled in. It returns an error
// wrapping ErrInvalidConfig when a field is out of range. cfg is not
// modified.
func New(cfg Config) (*TOTP, error) {
	t := &TOTP{
		digits: DefaultDigits,
		period: int64(DefaultPeriod / time.Second),
		window: DefaultWindow,
		now:    time.Now,
		rand:   rand.Reader,
	}
	switch cfg.Digits {
	case 0:
	case 6, 8:
		t.digits = otp.Digits(cfg.Digits)
	default:
		return nil, fmt.Errorf("%w: Digits is %d, want 6 or 8", ErrInvalidConfig, cfg.Digits)
	}
	switch {
	case cfg.Period == 0:
	case cfg.Period < time.Second || cfg.Period%time.Second != 0:
		return nil, fmt.Errorf("%w: Period is %v, want whole seconds, at least 1s", ErrInvalidConfig, cfg.Period)
	default:
		t.period = int64(cfg.Period / time.Second)
	}
	switch {
	case cfg.Window == 0:
	case cfg.Window < 0:
		t.window = 0
	case cfg.Window > MaxWindow:
		return nil, fmt.Errorf("%w: Window is %d, want at most %d", ErrInvalidConfig, cfg.Window, MaxWindow)
	default:
		t.window = int64(cfg.Window)
	}
	if cfg.Now != nil {
		t.now = cfg.Now
	}
	if cfg.Rand != nil {
		t.rand = cfg.Rand
	}
	return t, nil
}

var b32NoPadding = base32.StdEncoding.WithPadding(base32.NoPadding)

// GenerateSecret returns a new secret: SecretBytes bytes read from
// Config.Rand, base32-encoded (RFC 4648) in uppercase without padding. An
// error from the reader is returned wrapped.
func (t *TOTP) GenerateSecret() (string, error) {
	var b [SecretBytes]byte
	if _, err := io.ReadFull(t.rand, b[:]); err != nil {
		return "", fmt.Errorf("totp: generating secret: %w", err)
	}
	return b32NoPadding.EncodeToString(b[:]), nil
}

// Step returns the time step that contains at: floor(Unix seconds / period).
func (t *TOTP) Step(at time.Time) int64 {
	s := at.Unix()
	q := s / t.period
	if s%t.period < 0 {
		q-- // round toward minus infinity before the epoch
	}
	return q
}

// Code returns the code for the step that contains at. It is handy for tests
// and examples; servers check codes with Match. It returns an error wrapping
// ErrInvalidSecret for a malformed secret, and an error for a time before the
// Unix epoch, which has no TOTP step.
func (t *TOTP) Code(secret string, at time.Time) (string, error) {
	secret, err := canonicalSecret(secret)
	if err != nil {
		return "", err
	}
	step := t.Step(at)
	if step < 0 {
		return "", fmt.Errorf("totp: no code for %v, before the Unix epoch", at)
	}
	return t.code(secret, step)
}

// NextAccepted returns the code a user whose last accepted step is
// lastStep (0: none yet) can use first, at or after now, and the time from
// which Match accepts it: now when a fresh code is accepted at once, else
// the start of the step after lastStep (the replay rule refuses every code
// while the current step is at or below lastStep). It is for tests and
// end-to-end scripts that sign in more than once within a period: they
// wait until at, not a whole period. Servers never need it.
func (t *TOTP) NextAccepted(secret string, lastStep int64, now time.Time) (code string, at time.Time, err error) {
	at = now
	if lastStep > 0 && t.Step(now) <= lastStep {
		at = time.Unix((lastStep+1)*t.period, 0).In(now.Location())
	}
	code, err = t.Code(secret, at)
	return code, at, err
}

// code computes the code of a step for a canonical secret.
func (t *TOTP) code(secret string, step int64) (string, error) {
	c, err := hotp.GenerateCodeCustom(secret, uint64(step), hotp.ValidateOpts{
		Digits:    t.digits,
		Algorithm: otp.AlgorithmSHA1,
	})
	if err != nil {
		// Unreachable for a canonical secret; kept so a change in the
		// library cannot turn into an accepted code.
		return "", fmt.Errorf("totp: computing code: %w", err)
	}
	return c, nil
}

// Verify reports whether code is valid for secret at Config.Now, within the
// window. It is the spec's boolean verify and has no replay protection: a
// login must use Match and store the step it returns. A malformed code or
// secret gives false.
func (t *TOTP) Verify(code, secret string) bool {
	_, err := t.Match(code, secret, t.now(), 0)
	return err == nil
}

// Match is the result of a successful [TOTP.Match].
type Match struct {
	// Step is the step whose code matched.
	Step int64
	// Current is the step that contains the time of the check.
	Current int64
}

// LastStep returns the value to store as the user's last accepted step
// (lastTotpStep): max(Step, Current).
func (m Match) LastStep() int64 {
	return max(m.Step, m.Current)
}

// Match checks code against secret at time at, with replay protection.
// lastStep is the last accepted step stored for the user; 0 (or any value
// below 1) means none was accepted yet.
//
// The code must be exactly Digits ASCII digits; anything else, surrounding
// spaces included, is ErrInvalidCode before any HMAC is computed. Otherwise
// the code is compared in constant time with the code of every step from
// current-Window to current+Window; all of them are computed, whatever
// matches. Steps below 1 never match: step 0 is the first period after the
// Unix epoch, negative steps precede it, and 0 is the "none" of lastStep.
//
// Outcomes:
//   - no step matches: ErrInvalidCode;
//   - a step matches, but lastStep is set and the current step is at or below
//     it: ErrCodeUsed (the spec's rule);
//   - every matching step is at or below lastStep: ErrCodeUsed (the RFC 6238
//     rule: each step's code is accepted once, which closes the spec's hole
//     of a next-step code replayed in the next step);
//   - otherwise the newest matching step above lastStep is returned with the
//     current step.
//
// A malformed secret gives an error wrapping ErrInvalidSecret, whatever the
// code.
//
// On success the caller must store [Match.LastStep] (max(Step, Current)) as
// the new last step, atomically with the condition that the stored last step
// is still unset or below both Step and Current; if the condition fails, a
// concurrent request used the code first and this one must be rejected as
// ErrCodeUsed. Reading lastStep, calling Match and then writing
// unconditionally lets two racing requests both log in with one code.
func (t *TOTP) Match(code, secret string, at time.Time, lastStep int64) (Match, error) {
	secret, err := canonicalSecret(secret)
	if err != nil {
		return Match{}, err
	}
	if !t.wellFormed(code) {
		return Match{}, ErrInvalidCode
	}
	current := t.Step(at)
	matched := false
	var best int64
	for s := current - t.window; s <= current+t.window; s++ {
		want, err := t.code(secret, s)
		if err != nil {
			return Match{}, err
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) != 1 || s < 1 {
			continue
		}
		matched = true
		if s > lastStep {
			best = s // steps ascend: the last one kept is the newest
		}
	}
	switch {
	case !matched:
		return Match{}, ErrInvalidCode
	case lastStep > 0 && current <= lastStep:
		return Match{}, ErrCodeUsed
	case best == 0:
		return Match{}, ErrCodeUsed
	}
	return Match{Step: best, Current: current}, nil
}

// wellFormed reports whether code is exactly Digits ASCII digits.
func (t *TOTP) wellFormed(code string) bool {
	if len(code) != t.digits.Length() {
		return false
	}
	for i := 0; i < len(code); i++ {
		if code[i] < '0' || code[i] > '9' {
			return false
		}
	}
	return true
}

// canonicalSecret checks that s is base32 (RFC 4648 alphabet, either case,
// with or without correct '=' padding, at least one byte) and returns it
// uppercase without padding. Errors never quote the secret.
func canonicalSecret(s string) (string, error) {
	data := strings.TrimRight(s, "=")
	if data == "" {
		return "", fmt.Errorf("%w: empty", ErrInvalidSecret)
	}
	if pad := len(s) - len(data); pad != 0 && pad != (8-len(data)%8)%8 {
		return "", fmt.Errorf("%w: wrong padding", ErrInvalidSecret)
	}
	switch len(data) % 8 {
	case 1, 3, 6: // no whole number of bytes encodes to these lengths
		return "", fmt.Errorf("%w: impossible length %d", ErrInvalidSecret, len(data))
	}
	upper := true
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case 'A' <= c && c <= 'Z', '2' <= c && c <= '7':
		case 'a' <= c && c <= 'z':
			upper = false
		default:
			return "", fmt.Errorf("%w: byte %d is not in the base32 alphabet", ErrInvalidSecret, i)
		}
	}
	if upper {
		return data, nil
	}
	return strings.ToUpper(data), nil // ASCII only, checked above
}
