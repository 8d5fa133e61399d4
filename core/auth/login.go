package auth

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/recovery"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/token"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/core/user"
)

// inputFail answers a decoding or validation error.
func (s *Service) inputFail(c *call, err error) Response {
	var ie *inputError
	if errors.As(err, &ie) {
		return s.fail(c, ie.status, ie.msg)
	}
	return s.internal(c, "decode", err)
}

// currentUser returns the signed-in user, or the response to send instead:
// 401 "Not authenticated" (spec section 7), or 503 when the store failed.
func (s *Service) currentUser(c *call) (*user.User, *Response) {
	u, err := c.sess.User(c.ctx)
	if err == nil {
		return u, nil
	}
	r := s.sessionFailure(c, err)
	return nil, &r
}

// sessionFailure answers a request whose session check failed with err:
// 401 {"error":"Not authenticated"} for no valid session, 503 (or 500) for
// a store that failed.
func (s *Service) sessionFailure(c *call, err error) Response {
	if errors.Is(err, session.ErrNotAuthenticated) {
		return s.fail(c, http.StatusUnauthorized, msgNotAuthenticated)
	}
	return s.internal(c, "session", err)
}

// login is route rules 1 and 13 in one handler: rate limits by client
// address and by email, the password check, the per-account lock-out, then
// either a session or the 2fa_pending cookie. Both /api/login and
// /api/auth/login serve it.
func (s *Service) login(c *call) Response {
	in, err := decode(c.req, s.maxBody, str("email"), str("password"), boolean("remember"))
	if err != nil {
		return s.inputFail(c, err)
	}
	if in.str("email") == "" || in.str("password") == "" {
		return s.fail(c, http.StatusBadRequest, "Email and password are required")
	}
	// The address's attempt is counted before the password check, so
	// concurrent guesses can never pass the limit; a correct password gives
	// it back below.
	ipKey := s.clientKey(c.req)
	ipv, err := s.attempt(c, s.loginIP, ipKey)
	if err != nil {
		return s.internal(c, "login", err)
	}
	if ipv.limited {
		return s.tooMany(c, s.loginIP, ipv)
	}
	email, emailErr := normalizeEmail(in.str("email"))
	var u *user.User
	shown := ipv
	if emailErr == nil {
		ev, err := s.attempt(c, s.loginEmail, email)
		if err != nil {
			return s.internal(c, "login", err)
		}
		if ev.limited {
			return s.tooMany(c, s.loginEmail, ev)
		}
		if ev.checked && (!shown.checked || ev.res.Remaining < shown.res.Remaining) {
			shown = ev
		}
		u, err = s.users.ByEmail(c.ctx, email)
		if err != nil && !errors.Is(err, user.ErrNotFound) {
			return s.internal(c, "login", err)
		}
	}
	s.rateHeaders(c.header, shown)
	pw := in.str("password")
	chk, err := s.checkLogin(c, u, pw)
	if err != nil {
		return s.internal(c, "login: check password", err)
	}
	switch {
	case chk.noAccount != "":
		e := Event{Type: EventLoginFailed, Email: email, Detail: chk.noAccount}
		if u != nil {
			e.UserID = u.ID
		}
		s.audit(c, e)
		return s.fail(c, http.StatusUnauthorized, msgInvalidCredentials)
	case chk.locked:
		s.audit(c, Event{Type: EventLoginFailed, UserID: u.ID, Detail: "account locked"})
		return s.fail(c, http.StatusUnauthorized, msgInvalidCredentials)
	case !chk.ok:
		s.audit(c, Event{Type: EventLoginFailed, UserID: u.ID, Detail: "wrong password"})
		if chk.lockedUntil.After(s.now()) && !u.LockedUntil.Equal(chk.lockedUntil) {
			s.audit(c, Event{Type: EventAccountLocked, UserID: u.ID, Detail: "locked until " + isoTime(chk.lockedUntil)})
		}
		return s.fail(c, http.StatusUnauthorized, msgInvalidCredentials)
	}
	if chk.counted || u.FailedLogins > 0 || !u.LockedUntil.IsZero() {
		if err := s.users.ClearLoginFailures(c.ctx, u.ID); err != nil {
			return s.internal(c, "login: clear failures", err)
		}
	}
	// SECURITY.md deviation 4: the email key is reset on success; the
	// address key never is (an attacker would clear it by logging into an
	// account of their own between guesses). It gets back this attempt
	// only, so correct logins never count against it while failures do,
	// however many successes come between them. Also when the second
	// factor follows: the password was right.
	s.resetLimit(c, s.loginEmail, email)
	if s.refundLimit(c, s.loginIP, ipKey, ipv) && shown == ipv {
		// The headers showed the address key: it has one more left now.
		ipv.res.Remaining = min(ipv.res.Remaining+1, ipv.res.Limit)
		s.rateHeaders(c.header, ipv)
	}
	s.upgradeHash(c, u, pw)

	if u.TwoFactorEnabled {
		tok, err := s.pending.CreateWith(u.ID, pendingData(in.flag("remember"), u.SessionVersion))
		if err != nil {
			return s.internal(c, "login: pending token", err)
		}
		c.setCookie(s.pendingCookie(tok, int(PendingLifetime.Seconds())))
		s.audit(c, Event{Type: EventLoginPending, UserID: u.ID})
		return s.respond(c, http.StatusOK, map[string]bool{"requiresTwoFactor": true})
	}
	if err := c.sess.Login(c.ctx, u, in.flag("remember")); err != nil {
		return s.internal(c, "login: session", err)
	}
	s.audit(c, Event{Type: EventLoginSucceeded, UserID: u.ID})
	return s.respond(c, http.StatusOK, map[string]bool{"success": true})
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
// out right, login clears the count (it always clears on success); a
// failure recorded for a correct password is never seen as one.
func (s *Service) checkLogin(c *call, u *user.User, pw string) (loginCheck, error) {
	switch {
	case u == nil:
		s.dummyVerify(c, pw)
		return loginCheck{noAccount: "unknown email"}, nil
	case u.PasswordHash == "": // a custom store's NULL hash: an account that cannot log in with a password
		s.dummyVerify(c, pw)
		return loginCheck{noAccount: "no password"}, nil
	case len(pw) > maxPasswordBytes:
		s.dummyVerify(c, pw)
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
			_, chk.lockedUntil, recErr = s.users.RecordLoginFailure(c.ctx, u.ID, s.cfg.Lockout.Max, s.cfg.Lockout.Duration, s.now())
		}()
	} else {
		close(done)
	}
	ok, err := s.hasher.Verify(c.ctx, pw, u.PasswordHash)
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
		s.log.WarnContext(c.ctx, "authkit: login failure count not recorded", "user", u.ID, "err", recErr)
	default:
		chk.counted = count
	}
	return chk, nil
}

// upgradeHash stores a fresh hash when u's was made with older settings.
// It does not touch PasswordChangedAt, so no session ends. A conflict means
// the password changed meanwhile: nothing to do.
func (s *Service) upgradeHash(c *call, u *user.User, pw string) {
	rh, ok := s.hasher.(password.Rehasher)
	if !ok || !rh.NeedsRehash(u.PasswordHash) {
		return
	}
	h, err := s.hasher.Hash(c.ctx, pw)
	if err == nil {
		err = s.users.SetPassword(c.ctx, u.ID, user.PasswordUpdate{Hash: h, OldHash: u.PasswordHash})
	}
	if err != nil && !errors.Is(err, user.ErrConflict) {
		s.log.WarnContext(c.ctx, "authkit: password rehash failed", "user", u.ID, "err", err)
	}
}

// dummyVerify checks pw against the hash of a random password made by New,
// so a login for an unknown email costs one hash check like any other.
func (s *Service) dummyVerify(c *call, pw string) {
	if s.dummyHash != "" {
		_, _ = s.hasher.Verify(c.ctx, pw, s.dummyHash)
	}
}

// pendingData is the payload of a 2fa_pending token: the login's remember
// flag and the user's session version, so that a password reset, a
// password change or logout-everywhere also ends a login that is waiting
// for its second factor.
func pendingData(remember bool, version int64) []byte {
	flag := byte(0)
	if remember {
		flag = 1
	}
	return binary.AppendVarint([]byte{flag}, version)
}

func parsePendingData(d []byte) (remember bool, version int64, ok bool) {
	if len(d) < 2 || d[0] > 1 {
		return false, 0, false
	}
	version, n := binary.Varint(d[1:])
	return d[0] == 1, version, n == len(d)-1
}

func (s *Service) pendingCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: PendingCookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: !s.cfg.Insecure, SameSite: http.SameSiteLaxMode,
	}
}

func (s *Service) clearPending(c *call) { c.setCookie(s.pendingCookie("", -1)) }

// pendingUser reads and checks the 2fa_pending cookie for the verify and
// recover routes, counts the attempt against the per-user 2FA limit, and
// loads the user.
func (s *Service) pendingUser(c *call) (*user.User, token.Claims, *Response) {
	fail := func(r Response) (*user.User, token.Claims, *Response) { return nil, token.Claims{}, &r }
	raw, ok := c.req.Cookie(PendingCookie)
	if !ok || raw == "" {
		return fail(s.fail(c, http.StatusUnauthorized, msgNoPending2FA))
	}
	claims, err := s.pending.Verify(raw)
	if err != nil {
		return fail(s.fail(c, http.StatusUnauthorized, msg2FAExpired))
	}
	v, err := s.attempt(c, s.twoFactor, claims.UserID)
	if err != nil {
		return fail(s.internal(c, "2fa", err))
	}
	if v.limited {
		return fail(s.tooMany(c, s.twoFactor, v))
	}
	s.rateHeaders(c.header, v)
	u, err := s.users.ByID(c.ctx, claims.UserID)
	if errors.Is(err, user.ErrNotFound) {
		return fail(s.fail(c, http.StatusUnauthorized, msgInvalidSession))
	}
	if err != nil {
		return fail(s.internal(c, "2fa: load user", err))
	}
	return u, claims, nil
}

// pendingCurrent reports whether a pending login still stands: a password
// reset or change, or logout-everywhere, since the password step raised the
// user's session version and ends it.
func pendingCurrent(claims token.Claims, u *user.User) bool {
	_, version, ok := parsePendingData(claims.Data)
	return ok && version >= u.SessionVersion
}

// finishPending ends a 2FA login: the pending cookie goes, the session
// starts. remember comes from this request when it says, else from login.
// u is the user as last read from the store: every path that turns a
// pending login into a session goes through here, and here a pending login
// older than u's session version (a password reset or change, 2FA disable,
// email change or logout-everywhere since the password step) is refused,
// whatever the path did before.
func (s *Service) finishPending(c *call, op string, u *user.User, claims token.Claims, in input) *Response {
	if !pendingCurrent(claims, u) {
		r := s.fail(c, http.StatusUnauthorized, msg2FAExpired)
		return &r
	}
	remember, _, _ := parsePendingData(claims.Data)
	if _, said := in.bools["remember"]; said {
		remember = in.flag("remember")
	}
	s.clearPending(c)
	s.resetLimit(c, s.twoFactor, u.ID)
	if err := c.sess.Login(c.ctx, u, remember); err != nil {
		r := s.internal(c, op+": session", err)
		return &r
	}
	return nil
}

// verify2FA is route rule 4, with replay protection (DESIGN.md "TOTP
// replay") always on.
func (s *Service) verify2FA(c *call) Response {
	in, err := decode(c.req, s.maxBody, str("code"), boolean("remember"))
	if err != nil {
		return s.inputFail(c, err)
	}
	u, claims, fail := s.pendingUser(c)
	if fail != nil {
		return *fail
	}
	if !u.TwoFactorEnabled || u.TOTPSecret == "" {
		return s.fail(c, http.StatusUnauthorized, msgInvalidSession)
	}
	if !pendingCurrent(claims, u) {
		return s.fail(c, http.StatusUnauthorized, msg2FAExpired)
	}
	code := normalizeCode(in.str("code"))
	if code == "" || len(code) > maxCodeBytes {
		return s.fail(c, http.StatusBadRequest, msgInvalid2FACode)
	}
	secret, err := s.openSecret(u.ID, u.TOTPSecret, false)
	if err != nil {
		return s.internal(c, "2fa verify: decrypt", err)
	}
	m, err := s.totp.Match(code, secret, s.now(), u.LastTOTPStep)
	switch {
	case errors.Is(err, totp.ErrCodeUsed):
		s.audit(c, Event{Type: EventTwoFactorFailed, UserID: u.ID, Detail: "code already used"})
		return s.fail(c, http.StatusBadRequest, msgCodeUsed)
	case err != nil:
		s.audit(c, Event{Type: EventTwoFactorFailed, UserID: u.ID})
		return s.fail(c, http.StatusBadRequest, msgInvalid2FACode)
	}
	if err := s.users.AcceptTOTPStep(c.ctx, u.ID, m.Step, m.Current); err != nil {
		if errors.Is(err, user.ErrConflict) {
			s.audit(c, Event{Type: EventTwoFactorFailed, UserID: u.ID, Detail: "code already used"})
			return s.fail(c, http.StatusBadRequest, msgCodeUsed)
		}
		return s.internal(c, "2fa verify: accept step", err)
	}
	if r := s.finishPending(c, "2fa verify", u, claims, in); r != nil {
		return *r
	}
	s.audit(c, Event{Type: EventLoginSucceeded, UserID: u.ID, Detail: "totp"})
	return s.respond(c, http.StatusOK, map[string]bool{"success": true})
}

// recover2FA is route rule 5. The used code is removed with a conditional
// store update; when another recovery changed the codes meanwhile, the
// code is checked again against the fresh list (a few times at most).
func (s *Service) recover2FA(c *call) Response {
	in, err := decode(c.req, s.maxBody, str("code"), boolean("remember"))
	if err != nil {
		return s.inputFail(c, err)
	}
	u, claims, fail := s.pendingUser(c)
	if fail != nil {
		return *fail
	}
	// Rule 5 makes no twoFactorEnabled check: with 2FA off there are no
	// codes, so any code is invalid.
	if u.TwoFactorEnabled && !pendingCurrent(claims, u) {
		return s.fail(c, http.StatusUnauthorized, msg2FAExpired)
	}
	code := in.str("code")
	if code == "" || len(code) > maxCodeBytes {
		return s.fail(c, http.StatusBadRequest, msgInvalidRecoveryCode)
	}
	var remaining []string
	for attempt := 0; ; attempt++ {
		valid, rest, err := recovery.Verify(c.ctx, code, u.RecoveryCodeHashes, s.recovery)
		if err != nil && !valid {
			return s.internal(c, "2fa recover: verify", err)
		}
		if !valid {
			s.audit(c, Event{Type: EventTwoFactorFailed, UserID: u.ID, Detail: "recovery code"})
			return s.fail(c, http.StatusBadRequest, msgInvalidRecoveryCode)
		}
		err = s.users.ConsumeRecoveryCode(c.ctx, u.ID, u.RecoveryCodeHashes, rest)
		if err == nil {
			remaining = rest
			break
		}
		if !errors.Is(err, user.ErrConflict) || attempt == 2 {
			if errors.Is(err, user.ErrConflict) {
				return s.fail(c, http.StatusBadRequest, msgInvalidRecoveryCode)
			}
			return s.internal(c, "2fa recover: consume", err)
		}
		if u, err = s.users.ByID(c.ctx, u.ID); err != nil {
			if errors.Is(err, user.ErrNotFound) {
				return s.fail(c, http.StatusUnauthorized, msgInvalidSession)
			}
			return s.internal(c, "2fa recover: reload", err)
		}
		// The account changed under this login: check the pending login
		// again before spending a code of the fresh list.
		if !pendingCurrent(claims, u) {
			return s.fail(c, http.StatusUnauthorized, msg2FAExpired)
		}
	}
	if r := s.finishPending(c, "2fa recover", u, claims, in); r != nil {
		return *r
	}
	s.audit(c, Event{Type: EventRecoveryCodeUsed, UserID: u.ID, Detail: "remaining " + itoa(len(remaining))})
	return s.respond(c, http.StatusOK, map[string]any{"success": true, "remainingCodes": len(remaining)})
}

// logout ends this session and any pending 2FA login: always 200.
func (s *Service) logout(c *call) Response {
	_ = c.sess.Logout(c.ctx)
	s.clearPending(c)
	return s.ok(c, msgLoggedOut)
}

// logoutAll ends every session of the user, this one included.
func (s *Service) logoutAll(c *call) Response {
	u, fail := s.currentUser(c)
	if fail != nil {
		return *fail
	}
	if _, err := s.users.BumpSessionVersion(c.ctx, u.ID); err != nil {
		return s.internal(c, "logout all", err)
	}
	_ = c.sess.Logout(c.ctx)
	s.clearPending(c)
	s.audit(c, Event{Type: EventLoggedOutEverywhere, UserID: u.ID})
	return s.ok(c, msgLoggedOutEverywhere)
}

// me answers the signed-in user's safe view.
func (s *Service) me(c *call) Response {
	u, fail := s.currentUser(c)
	if fail != nil {
		return *fail
	}
	return s.respond(c, http.StatusOK, u.Public())
}
