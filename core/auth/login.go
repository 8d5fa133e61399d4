package auth

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/recovery"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/token"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/core/user"
)

// Signing in and out: the password step (docs/api.md, Login), the second
// step by TOTP code or recovery code (2FA verify and recover), logout, logout
// everywhere and the current user.

// LoginInput is what Login takes.
type LoginInput struct {
	Email    string
	Password string
	Remember bool // a long-lived session (Config.RememberLifetime)
}

// LoginResult is what a successful password step gives.
type LoginResult struct {
	User *user.User
	// RequiresTwoFactor: the visit now holds the 2fa_pending cookie and no
	// session; VerifyTwoFactor or RecoverTwoFactor finishes the login.
	// Otherwise the visit holds the session cookie (none when the app
	// keeps its own: StartSecondStep with OwnSession).
	RequiresTwoFactor bool
	// SignedUp: the sign-in made the account (VerifyEmailSignIn with
	// sign-up by email).
	SignedUp bool
}

// Login is the password step: rate limits by client address and by email,
// the password check, the per-account lock-out, then either a session or
// the 2fa_pending cookie on v. A wrong password, an unknown email, a locked
// account and an account without a password all fail with
// [ErrInvalidCredentials] after the same work (SECURITY.md "Timing").
func (s *Service) Login(ctx context.Context, v *Visit, in LoginInput) (_ LoginResult, err error) {
	ctx, flow := s.enter(ctx, v, "login")
	defer flow.end(&err)
	if in.Email == "" || in.Password == "" {
		return LoginResult{}, ErrEmailPasswordRequired
	}
	if err := checkText(text{"email", in.Email}, text{"password", in.Password}); err != nil {
		return LoginResult{}, err
	}
	// The address's attempt is counted before the password check, so
	// concurrent guesses can never pass the limit; a correct password gives
	// it back below.
	ipv, err := s.check(ctx, v, s.lim.loginIP, v.ClientIP())
	if err != nil {
		return LoginResult{}, err
	}
	email, emailErr := normalizeEmail(in.Email)
	var u *user.User
	shown := ipv
	if emailErr == nil {
		ev, err := s.check(ctx, v, s.lim.loginEmail, email)
		if err != nil {
			return LoginResult{}, err
		}
		if ev.checked && (!shown.checked || ev.res.Remaining < shown.res.Remaining) {
			shown = ev
		}
		u, err = s.users.ByEmail(ctx, email)
		if err != nil && !errors.Is(err, user.ErrNotFound) {
			return LoginResult{}, fmt.Errorf("login: %w", err)
		}
	}
	s.rateHeaders(v.header, shown)
	chk, err := s.checkLogin(ctx, v, u, in.Password)
	if err != nil {
		return LoginResult{}, fmt.Errorf("login: check password: %w", err)
	}
	switch {
	case chk.noAccount != "":
		e := Event{Type: EventLoginFailed, Email: email, Detail: chk.noAccount}
		if u != nil {
			e.UserID = u.ID
		}
		s.audit(ctx, v, e)
		return LoginResult{}, ErrInvalidCredentials
	case chk.locked:
		s.audit(ctx, v, Event{Type: EventLoginFailed, UserID: u.ID, Detail: "account locked"})
		return LoginResult{}, ErrInvalidCredentials
	case !chk.ok:
		s.audit(ctx, v, Event{Type: EventLoginFailed, UserID: u.ID, Detail: "wrong password"})
		if chk.lockedUntil.After(s.now()) && !u.LockedUntil.Equal(chk.lockedUntil) {
			s.audit(ctx, v, Event{Type: EventAccountLocked, UserID: u.ID, Detail: "locked until " + isoTime(chk.lockedUntil)})
		}
		return LoginResult{}, ErrInvalidCredentials
	}
	if s.users.lockout != nil && (chk.counted || u.FailedLogins > 0 || !u.LockedUntil.IsZero()) {
		if err := s.users.lockout.ClearLoginFailures(ctx, u.ID); err != nil {
			return LoginResult{}, fmt.Errorf("login: clear failures: %w", err)
		}
	}
	// SECURITY.md deviation 4: the email key is reset on success; the
	// address key never is (an attacker would clear it by logging into an
	// account of their own between guesses). It gets back this attempt
	// only, so correct logins never count against it while failures do,
	// however many successes come between them. Also when the second
	// factor follows: the password was right.
	s.resetLimit(ctx, v, s.lim.loginEmail, email)
	if s.refundLimit(ctx, v, s.lim.loginIP, v.ClientIP(), ipv) && shown == ipv {
		// The headers showed the address key: it has one more left now.
		ipv.res.Remaining = min(ipv.res.Remaining+1, ipv.res.Limit)
		s.rateHeaders(v.header, ipv)
	}
	s.upgradeHash(ctx, v, u, in.Password)
	return s.firstFactorDone(ctx, v, u, firstFactor{how: LoginPassword, remember: in.Remember})
}

// firstFactor is how the first step of a sign-in ended: the method that
// proved it, and what the rest of the sign-in does.
type firstFactor struct {
	how      LoginMethod // LoginPassword, LoginEmailSignIn, LoginAppPassword
	remember bool        // a long-lived session
	// ownSession: the app keeps its own sessions (StartSecondStep with
	// OwnSession): no authkit session is started, now or after the
	// second step.
	ownSession bool
}

// firstFactorDone ends the first step of a sign-in whose factor was
// accepted, for every way to give it (the password, a mailed sign-in
// code, the app's own check): an account with 2FA gets the 2fa_pending
// cookie unless this browser is trusted (Config.TrustedDevices); any
// other gets AfterLogin, the session (unless ff.ownSession), the
// login_succeeded event and the new-device notice. An *Error (a hook's
// veto) is returned as it is.
func (s *Service) firstFactorDone(ctx context.Context, v *Visit, u *user.User, ff firstFactor) (LoginResult, error) {
	how := ff.how
	if u.TwoFactorEnabled {
		// A browser the user trusted at an earlier second step skips it
		// (Config.TrustedDevices): its cookie, its record, its version.
		trusted, err := s.trustedRecord(ctx, v, u)
		if err != nil {
			return LoginResult{}, fmt.Errorf("%s: %w", how, err)
		}
		if trusted == "" {
			return s.startPending(ctx, v, u, ff)
		}
		how = LoginTrustedDevice
	}
	if err := s.afterLogin(ctx, u, how); err != nil {
		return LoginResult{}, err
	}
	if !ff.ownSession {
		if err := s.startSession(ctx, v, u, ff.remember); err != nil {
			return LoginResult{}, fmt.Errorf("%s: session: %w", how, err)
		}
	}
	e := Event{Type: EventLoginSucceeded, UserID: u.ID}
	switch {
	case how == LoginTrustedDevice:
		e.Detail = "trusted device"
	case how != LoginPassword:
		e.Detail = string(how)
	}
	s.audit(ctx, v, e)
	if !ff.ownSession {
		s.signedIn(ctx, v, u)
	}
	return LoginResult{User: u}, nil
}

// startPending ends the password step of an account with 2FA: the
// 2fa_pending cookie, no session.
func (s *Service) startPending(ctx context.Context, v *Visit, u *user.User, ff firstFactor) (LoginResult, error) {
	var nonce [pendingNonceBytes]byte
	if _, err := io.ReadFull(s.cfg.Rand, nonce[:]); err != nil {
		return LoginResult{}, fmt.Errorf("%s: pending token: random: %w", ff.how, err)
	}
	tok, err := s.pending.CreateWith(u.ID, pendingData(pendingFlags(ff), u.SessionVersion, nonce[:]))
	if err != nil {
		return LoginResult{}, fmt.Errorf("%s: pending token: %w", ff.how, err)
	}
	// The second step takes this entry once (holdPending): a pending
	// login finishes one sign-in, whatever factor a second try brings.
	if err := s.pendingLogins.Put(ctx, pendingKey(nonce[:]), []byte(u.ID), s.now().Add(PendingLifetime)); err != nil {
		return LoginResult{}, fmt.Errorf("%s: pending login: %w: %w", ff.how, errBackend, err) // 503: the store is down (or full)
	}
	s.setPending(v, tok)
	s.audit(ctx, v, Event{Type: EventLoginPending, UserID: u.ID})
	return LoginResult{User: u, RequiresTwoFactor: true}, nil
}

// loginCheck is the outcome of the password step of a login.
type loginCheck struct {
	noAccount   string    // why no account's password was checked (the dummy hash was): "unknown email", "no password", ...
	locked      bool      // the account is locked (Config.Lockout); its password was checked all the same
	ok          bool      // the password matched
	counted     bool      // a failure was recorded before the answer was known
	lockedUntil time.Time // the account's LockedUntil after that failure
}

// checkLogin is the password step of a login, made so that a failure costs
// the same whether or not the account exists (SECURITY.md "Timing").
//
// Every login checks exactly one hash: the account's, or for an unknown
// email, a malformed one, an account without a password or a password too
// long to check, the dummy hash New made. An account that can fail (it has
// a password and is not locked) also counts the failure towards the
// lock-out, and it counts it while the hash is being checked, not after: the
// answer waits for max(hash, write), which is the hash (bcrypt at cost 12 is
// about 250 ms, a store write a few), so the write that an unknown email
// never makes is not on the path an observer times. When the password turns
// out right, Login clears the count (it always clears on success); a
// failure recorded for a correct password is never seen as one.
func (s *Service) checkLogin(ctx context.Context, v *Visit, u *user.User, pw string) (loginCheck, error) {
	switch {
	case u == nil:
		s.dummyVerify(ctx, v, pw)
		return loginCheck{noAccount: "unknown email"}, nil
	case u.PasswordHash == "": // a custom store's NULL hash: an account that cannot log in with a password
		s.dummyVerify(ctx, v, pw)
		return loginCheck{noAccount: "no password"}, nil
	case len(pw) > maxPasswordBytes:
		s.dummyVerify(ctx, v, pw)
		return loginCheck{noAccount: "password too long"}, nil
	}
	chk := loginCheck{locked: u.LockedUntil.After(s.now())}
	count := s.cfg.Lockout.Max > 0 && !chk.locked
	var recErr error
	done := make(chan struct{})
	if count {
		go func() {
			defer close(done)
			defer func() { // a custom store's panic must not end the process
				if p := recover(); p != nil {
					recErr = fmt.Errorf("RecordLoginFailure panicked: %v", p)
				}
			}()
			_, chk.lockedUntil, recErr = s.users.lockout.RecordLoginFailure(ctx, u.ID, s.cfg.Lockout.Max, s.cfg.Lockout.Duration, s.now())
		}()
	} else {
		close(done)
	}
	ok, err := s.hasher.Verify(ctx, pw, u.PasswordHash)
	<-done
	if err != nil {
		return loginCheck{}, fmt.Errorf("verify password: %w", err)
	}
	chk.ok = ok
	switch {
	case errors.Is(recErr, user.ErrNotFound):
		return loginCheck{noAccount: "account deleted"}, nil
	case recErr != nil && !ok:
		return loginCheck{}, fmt.Errorf("record failure: %w", recErr)
	case recErr != nil:
		// The password is right and nothing was counted: login goes on
		// (and clears the count, which fails too if the store is down).
		s.log.WarnContext(ctx, "authkit: login failure count not recorded", "user", u.ID, "err", recErr)
	default:
		chk.counted = count
	}
	return chk, nil
}

// upgradeHash stores a fresh hash when u's was made with older settings
// and the store can (user.PasswordRehash).
// It does not touch PasswordChangedAt, so no session ends. A conflict means
// the password changed meanwhile: nothing to do.
func (s *Service) upgradeHash(ctx context.Context, v *Visit, u *user.User, pw string) {
	rh, ok := s.hasher.(password.Rehasher)
	if !ok || s.users.rehash == nil || !rh.NeedsRehash(u.PasswordHash) {
		return
	}
	h, err := s.hasher.Hash(ctx, pw)
	if err == nil {
		err = s.users.rehash.RehashPassword(ctx, u.ID, u.PasswordHash, h)
	}
	if err != nil && !errors.Is(err, user.ErrConflict) {
		s.log.WarnContext(ctx, "authkit: password rehash failed", "user", u.ID, "err", err)
	}
}

// dummyVerify checks pw against the hash of a random password made by New,
// so a login for an unknown email costs one hash check like any other.
func (s *Service) dummyVerify(ctx context.Context, v *Visit, pw string) {
	if s.dummyHash != "" {
		_, _ = s.hasher.Verify(ctx, pw, s.dummyHash)
	}
}

// The pending login between the two steps.

// pendingData is the payload of a 2fa_pending token: the login's remember
// flag and the user's session version, so that a password reset, a
// password change or logout-everywhere also ends a login that is waiting
// for its second factor.
// pendingNonceBytes is the random part of a 2fa_pending token: two
// logins of one account in the same millisecond get different cookies, so
// what is bound to one pending login (a mailed email code) cannot finish
// the other.
const pendingNonceBytes = 16

// pendingData is the payload of a 2fa_pending token: the remember flag,
// the session version the password step saw, and the nonce.
func pendingData(flags byte, version int64, nonce []byte) []byte {
	return append(binary.AppendVarint([]byte{flags}, version), nonce...)
}

// The flags of a pending login, the first byte of its payload.
const (
	pendingRemember   byte = 1 << iota // a long-lived session
	pendingOwnSession                  // the app keeps its own sessions: the second step starts none
	pendingAllFlags   = pendingRemember | pendingOwnSession
)

// pendingFlags are the flags of a pending login that ff started.
func pendingFlags(ff firstFactor) byte {
	var f byte
	if ff.remember {
		f |= pendingRemember
	}
	if ff.ownSession {
		f |= pendingOwnSession
	}
	return f
}

// parsePendingData reads pendingData's payload. A payload without the
// nonce, as tokens issued before it had one carry, is still read (and
// refused by holdPending, which needs the nonce).
func parsePendingData(d []byte) (flags byte, version int64, ok bool) {
	flags, version, _, ok = parsePending(d)
	return flags, version, ok
}

// parsePending is parsePendingData with the nonce: nil for a token
// issued before pending logins had one.
func parsePending(d []byte) (flags byte, version int64, nonce []byte, ok bool) {
	if len(d) < 2 || d[0]&^pendingAllFlags != 0 {
		return 0, 0, nil, false
	}
	version, n := binary.Varint(d[1:])
	if n <= 0 {
		return 0, 0, nil, false
	}
	switch rest := d[1+n:]; len(rest) {
	case 0:
		return d[0], version, nil, true
	case pendingNonceBytes:
		return d[0], version, rest, true
	}
	return 0, 0, nil, false
}

// pendingKey is the key of a pending login in Config.PendingLogins.
func pendingKey(nonce []byte) string { return "2fa_pending:" + hex.EncodeToString(nonce) }

// holdPending takes the pending login of claims for the one request that
// may finish it, before that request checks or spends its factor: of any
// number of second steps with one 2fa_pending cookie, concurrent or one
// after another, one at a time gets past here, and once one has finished
// the login none does (ErrTwoFactorExpired; likewise a token issued before
// pending logins were kept, which has no nonce). A second step that fails
// gives the pending login back (release), so that the user may try again
// or use another factor, as the spec keeps the cookie after a wrong code;
// taking it first means a loser spends no factor (a recovery code) for a
// login it cannot finish.
func (s *Service) holdPending(ctx context.Context, claims token.Claims) (*heldPending, error) {
	_, _, nonce, ok := parsePending(claims.Data)
	if !ok || nonce == nil {
		return nil, ErrTwoFactorExpired
	}
	key := pendingKey(nonce)
	id, err := s.pendingLogins.Take(ctx, key, s.now())
	switch {
	case errors.Is(err, onetime.ErrNotFound):
		return nil, ErrTwoFactorExpired
	case err != nil:
		return nil, fmt.Errorf("pending login: %w: %w", errBackend, err)
	case string(id) != claims.UserID:
		return nil, ErrTwoFactorExpired
	}
	return &heldPending{s: s, key: key, userID: claims.UserID, expires: claims.IssuedAt.Add(PendingLifetime)}, nil
}

// heldPending is a pending login a second step has taken (holdPending).
type heldPending struct {
	s       *Service
	key     string
	userID  string
	expires time.Time
}

// release gives the pending login back when *err is set (the second step
// failed), for the rest of its lifetime. A store that cannot take it back
// is logged: the user then logs in again.
func (h *heldPending) release(ctx context.Context, err *error) {
	if *err == nil || !h.s.now().Before(h.expires) {
		return
	}
	if perr := h.s.pendingLogins.Put(context.WithoutCancel(ctx), h.key, []byte(h.userID), h.expires); perr != nil {
		h.s.log.WarnContext(ctx, "authkit: a pending login could not be given back after a failed second step", "user", h.userID, "err", perr)
	}
}

func (s *Service) pendingCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: PendingCookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: !s.cfg.Insecure, SameSite: http.SameSiteLaxMode,
	}
}

func (s *Service) clearPending(v *Visit) { s.setPending(v, "") }

// pendingUser reads and checks the 2fa_pending cookie for the second step,
// counts the attempt against the per-user 2FA limit, and loads the user.
func (s *Service) pendingUser(ctx context.Context, v *Visit) (*user.User, token.Claims, error) {
	claims, err := s.pendingClaims(v)
	if err != nil {
		return nil, token.Claims{}, err
	}
	if err := s.checkShown(ctx, v, s.lim.twoFactor, claims.UserID); err != nil {
		return nil, token.Claims{}, err
	}
	u, err := s.pendingUserOf(ctx, claims)
	if err != nil {
		return nil, token.Claims{}, err
	}
	return u, claims, nil
}

// pendingClaims verifies the visit's 2fa_pending cookie: none is
// ErrNoPendingTwoFactor, one that does not verify (expired included)
// ErrTwoFactorExpired.
func (s *Service) pendingClaims(v *Visit) (token.Claims, error) {
	raw, ok := v.pendingValue()
	if !ok || raw == "" {
		return token.Claims{}, ErrNoPendingTwoFactor
	}
	claims, err := s.pending.Verify(raw)
	if err != nil {
		return token.Claims{}, ErrTwoFactorExpired
	}
	return claims, nil
}

// pendingUserOf loads the user of a verified pending login; a user deleted
// since is ErrInvalidSession.
func (s *Service) pendingUserOf(ctx context.Context, claims token.Claims) (*user.User, error) {
	u, err := s.users.ByID(ctx, claims.UserID)
	if errors.Is(err, user.ErrNotFound) {
		return nil, ErrInvalidSession
	}
	if err != nil {
		return nil, fmt.Errorf("2fa: load user: %w", err)
	}
	return u, nil
}

// pendingCurrent reports whether a pending login still stands: a password
// reset or change, or logout-everywhere, since the password step raised the
// user's session version and ends it.
func pendingCurrent(claims token.Claims, u *user.User) bool {
	_, version, ok := parsePendingData(claims.Data)
	return ok && version >= u.SessionVersion
}

// finishPending ends a 2FA login: the pending cookie goes, the session
// starts. The caller holds the pending login (holdPending). remember, when
// set, overrides the one given at the password step.
// u is the user as last read from the store: every path that turns a
// pending login into a session goes through here, and here a pending login
// older than u's session version (a password reset or change, 2FA disable,
// email change or logout-everywhere since the password step) is refused,
// whatever the path did before.
func (s *Service) finishPending(ctx context.Context, v *Visit, u *user.User, claims token.Claims, how LoginMethod, remember *bool) error {
	if !pendingCurrent(claims, u) {
		return ErrTwoFactorExpired
	}
	if err := s.afterLogin(ctx, u, how); err != nil {
		return err
	}
	flags, _, _ := parsePendingData(claims.Data)
	keep := flags&pendingRemember != 0
	if remember != nil {
		keep = *remember
	}
	s.clearPending(v)
	s.resetLimit(ctx, v, s.lim.twoFactor, u.ID)
	if flags&pendingOwnSession != 0 {
		return nil // the app's own session: FinishSecondStep's caller starts it
	}
	if err := s.startSession(ctx, v, u, keep); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	s.signedIn(ctx, v, u)
	return nil
}

// TwoFactorInput is what VerifyTwoFactor and RecoverTwoFactor take: the
// code of the second step of a login.
type TwoFactorInput struct {
	Code string
	// Remember, when set, overrides the remember flag of the password
	// step (spec: "the remember flag of a 2FA login").
	Remember *bool
	// TrustDevice marks this browser as trusted: later password logins
	// from it skip the second step (Config.TrustedDevices; ignored
	// without it).
	TrustDevice bool
}

// TwoFactorResult is what the second step of a login gives: the user, now
// signed in on the visit, and how many recovery codes the account has left.
type TwoFactorResult struct {
	User           *user.User
	RemainingCodes int
}

// VerifyTwoFactor is the second step by TOTP code (POST /api/2fa/verify), with
// replay protection always on: a code's time step is accepted once.
func (s *Service) VerifyTwoFactor(ctx context.Context, v *Visit, in TwoFactorInput) (_ TwoFactorResult, err error) {
	ctx, flow := s.enter(ctx, v, "2fa/verify")
	defer flow.end(&err)
	u, err := s.verifyTwoFactor(ctx, v, in)
	if err != nil {
		return TwoFactorResult{}, err
	}
	return TwoFactorResult{User: u, RemainingCodes: len(u.RecoveryCodeHashes)}, nil
}

func (s *Service) verifyTwoFactor(ctx context.Context, v *Visit, in TwoFactorInput) (_ *user.User, err error) {
	if err := checkText(text{"code", in.Code}); err != nil {
		return nil, err
	}
	u, claims, err := s.pendingUser(ctx, v)
	if err != nil {
		return nil, err
	}
	if s.users.twoFactor == nil {
		return nil, errNoTwoFactor
	}
	if !u.TwoFactorEnabled || u.TOTPSecret == "" {
		return nil, ErrInvalidSession
	}
	if !pendingCurrent(claims, u) {
		return nil, ErrTwoFactorExpired
	}
	held, err := s.holdPending(ctx, claims)
	if err != nil {
		return nil, err
	}
	defer held.release(ctx, &err)
	code := normalizeCode(in.Code)
	if code == "" || len(code) > maxCodeBytes {
		return nil, ErrInvalidTwoFactorCode
	}
	secret, err := s.openSecret(u.ID, u.TOTPSecret, false)
	if err != nil {
		return nil, fmt.Errorf("2fa verify: decrypt: %w", err)
	}
	m, err := s.totp.Match(code, secret, s.now(), u.LastTOTPStep)
	switch {
	case errors.Is(err, totp.ErrCodeUsed):
		s.audit(ctx, v, Event{Type: EventTwoFactorFailed, UserID: u.ID, Detail: "code already used", Factor: LoginTOTP})
		s.codeReused(ctx, v, u)
		return nil, ErrCodeUsed
	case err != nil:
		s.audit(ctx, v, Event{Type: EventTwoFactorFailed, UserID: u.ID, Factor: LoginTOTP})
		return nil, ErrInvalidTwoFactorCode
	}
	if err := s.users.twoFactor.AcceptTOTPStep(ctx, u.ID, m.Step, m.Current); err != nil {
		if errors.Is(err, user.ErrConflict) {
			s.audit(ctx, v, Event{Type: EventTwoFactorFailed, UserID: u.ID, Detail: "code already used", Factor: LoginTOTP})
			s.codeReused(ctx, v, u)
			return nil, ErrCodeUsed
		}
		return nil, fmt.Errorf("2fa verify: accept step: %w", err)
	}
	if err := s.finishPending(ctx, v, u, claims, LoginTOTP, in.Remember); err != nil {
		return nil, err
	}
	s.maybeTrust(ctx, v, u, in.TrustDevice)
	s.audit(ctx, v, Event{Type: EventLoginSucceeded, UserID: u.ID, Detail: "totp", Factor: LoginTOTP})
	return u, nil
}

// RecoverTwoFactor is the second step by recovery code (POST /api/2fa/recover). The
// used code is removed with a conditional store update; when another
// recovery changed the codes meanwhile, the account is read again, the
// pending login checked again, and the code checked against the fresh list
// (a few times at most).
func (s *Service) RecoverTwoFactor(ctx context.Context, v *Visit, in TwoFactorInput) (_ TwoFactorResult, err error) {
	ctx, flow := s.enter(ctx, v, "2fa/recover")
	defer flow.end(&err)
	if err := checkText(text{"code", in.Code}); err != nil {
		return TwoFactorResult{}, err
	}
	u, claims, err := s.pendingUser(ctx, v)
	if err != nil {
		return TwoFactorResult{}, err
	}
	if s.users.twoFactor == nil {
		return TwoFactorResult{}, errNoTwoFactor
	}
	// The spec's recover makes no twoFactorEnabled check: with 2FA off there are no
	// codes, so any code is invalid.
	if u.TwoFactorEnabled && !pendingCurrent(claims, u) {
		return TwoFactorResult{}, ErrTwoFactorExpired
	}
	if in.Code == "" || len(in.Code) > maxCodeBytes {
		return TwoFactorResult{}, ErrInvalidRecoveryCode
	}
	held, err := s.holdPending(ctx, claims)
	if err != nil {
		return TwoFactorResult{}, err
	}
	defer held.release(ctx, &err)
	var remaining []string
	for attempt := 0; ; attempt++ {
		valid, rest, err := recovery.Verify(ctx, in.Code, u.RecoveryCodeHashes, s.recovery)
		if err != nil && !valid {
			return TwoFactorResult{}, fmt.Errorf("2fa recover: verify: %w", err)
		}
		if !valid {
			s.audit(ctx, v, Event{Type: EventTwoFactorFailed, UserID: u.ID, Detail: "recovery code", Factor: LoginRecoveryCode})
			return TwoFactorResult{}, ErrInvalidRecoveryCode
		}
		err = s.users.twoFactor.ConsumeRecoveryCode(ctx, u.ID, u.RecoveryCodeHashes, rest)
		if err == nil {
			remaining = rest
			break
		}
		if !errors.Is(err, user.ErrConflict) {
			return TwoFactorResult{}, fmt.Errorf("2fa recover: consume: %w", err)
		}
		if attempt == 2 {
			return TwoFactorResult{}, ErrInvalidRecoveryCode
		}
		if u, err = s.users.ByID(ctx, u.ID); err != nil {
			if errors.Is(err, user.ErrNotFound) {
				return TwoFactorResult{}, ErrInvalidSession
			}
			return TwoFactorResult{}, fmt.Errorf("2fa recover: reload: %w", err)
		}
		// The account changed under this login: check the pending login
		// again before spending a code of the fresh list.
		if !pendingCurrent(claims, u) {
			return TwoFactorResult{}, ErrTwoFactorExpired
		}
	}
	if err := s.finishPending(ctx, v, u, claims, LoginRecoveryCode, in.Remember); err != nil {
		return TwoFactorResult{}, err
	}
	s.maybeTrust(ctx, v, u, in.TrustDevice)
	s.audit(ctx, v, Event{Type: EventRecoveryCodeUsed, UserID: u.ID, Detail: "remaining " + itoa(len(remaining)), Factor: LoginRecoveryCode})
	s.send(ctx, v, mail.KindRecoveryCodeUsed, u.Email, mail.Data{Name: u.Name, IP: v.clientAddr(), CodesLeft: len(remaining)})
	return TwoFactorResult{User: u, RemainingCodes: len(remaining)}, nil
}

// Logout ends this visit's session and any pending 2FA login. It never
// fails.
func (s *Service) Logout(ctx context.Context, v *Visit) {
	ctx, flow := s.enter(ctx, v, "logout")
	defer flow.end(nil)
	if err := v.sess.Logout(ctx); err != nil {
		// The cookie is expired all the same; a copy lives until the
		// record's lifetime ends or the user ends it from the list.
		s.log.WarnContext(ctx, "authkit: logout: session record not deleted", "err", err)
	}
	s.clearPending(v)
}

// LogoutEverywhere ends every session of the signed-in user, this one
// included, every pending 2FA login and every trusted browser, and deletes
// every passkey (each audited and mailed): it is what an owner does who
// fears someone else got in, and a passkey that someone added would
// outlive every session (SECURITY.md, deviation 15). Because it removes
// ways in, it needs a recent authentication like ending one other session
// ([ErrReauthenticationRequired]): a stolen old session cannot sign the
// owner out everywhere and delete their passkeys.
func (s *Service) LogoutEverywhere(ctx context.Context, v *Visit) (err error) {
	ctx, flow := s.enter(ctx, v, "logout-all")
	defer flow.end(&err)
	if err := s.enabled(FeatureLogoutEverywhere); err != nil {
		return err
	}
	u, err := s.RecentUser(ctx, v)
	if err != nil {
		return err
	}
	if _, err := s.users.versions.BumpSessionVersion(ctx, u.ID); err != nil {
		return fmt.Errorf("logout all: %w", err)
	}
	// Committed: every session is dead. What follows is reported, never
	// an error that would hide the change.
	s.audit(ctx, v, Event{Type: EventLoggedOutEverywhere, UserID: u.ID})
	if err := s.endOtherSessions(ctx, v, u.ID, false); err != nil {
		s.log.WarnContext(ctx, "authkit: logout all: session records not deleted", "user", u.ID, "err", err)
	}
	s.revokePasskeys(ctx, v, u)
	s.revokeAPIKeys(ctx, v, u)
	_ = v.sess.Logout(ctx) // its record is gone with the others
	s.clearPending(v)
	return nil
}

// CurrentUser returns the visit's signed-in user: [ErrNotAuthenticated]
// without a valid session (docs/api.md, Conventions).
func (s *Service) CurrentUser(ctx context.Context, v *Visit) (_ *user.User, err error) {
	ctx, flow := s.enter(ctx, v, "me")
	defer flow.end(&err)
	u, err := v.sess.User(ctx)
	switch {
	case err == nil:
		return u, nil
	case errors.Is(err, session.ErrNotAuthenticated):
		return nil, ErrNotAuthenticated
	default:
		return nil, fmt.Errorf("session: %w", err)
	}
}

// The routes of the group: decode, call, render.

func loginRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("email"), str("password"), boolean("remember"))
	if err != nil {
		return s.failure(ctx, v, "login", err)
	}
	res, err := s.Login(ctx, v, LoginInput{Email: in.str("email"), Password: in.str("password"), Remember: in.flag("remember")})
	return s.signInAnswer(ctx, v, "login", res, err)
}

// secondStep decodes the body of the verify and recover routes.
func (s *Service) secondStep(v *Visit) (TwoFactorInput, error) {
	in, err := decode(v.req, s.maxBody, str("code"), boolean("remember"), boolean("trustDevice"))
	if err != nil {
		return TwoFactorInput{}, err
	}
	step := TwoFactorInput{Code: in.str("code"), TrustDevice: in.flag("trustDevice")}
	if r, said := in.bools["remember"]; said {
		step.Remember = &r
	}
	return step, nil
}

func verifyTwoFactorRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := s.secondStep(v)
	if err == nil {
		_, err = s.VerifyTwoFactor(ctx, v, in)
	}
	return s.answer(ctx, v, "2fa verify", map[string]bool{"success": true}, err)
}

func recoverTwoFactorRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := s.secondStep(v)
	var res TwoFactorResult
	if err == nil {
		res, err = s.RecoverTwoFactor(ctx, v, in)
	}
	return s.answer(ctx, v, "2fa recover", map[string]any{"success": true, "remainingCodes": res.RemainingCodes}, err)
}

func logoutRoute(ctx context.Context, s *Service, v *Visit) Response {
	s.Logout(ctx, v)
	return s.respond(v, http.StatusOK, s.say(v, "logged_out", msgLoggedOut))
}

func logoutAllRoute(ctx context.Context, s *Service, v *Visit) Response {
	err := s.LogoutEverywhere(ctx, v)
	return s.answer(ctx, v, "logout all", s.say(v, "logged_out_everywhere", msgLoggedOutEverywhere), err)
}

func meRoute(ctx context.Context, s *Service, v *Visit) Response {
	u, err := s.CurrentUser(ctx, v)
	if err != nil {
		return s.failure(ctx, v, "me", err)
	}
	return s.respond(v, http.StatusOK, u.Public())
}
