package authtest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
)

// specErrorRow is one row of the spec's error table (docs/errors.md): run
// makes its condition happen and returns the replies to check; "also"
// names the subtests that cover the row in depth (store state, mails,
// cookies).
type specErrorRow struct {
	status int
	text   string // spec text; for 429 the form "Too many ... Try again later."
	cond   string
	also   string
	opts   []option
	run    func(t *testing.T, e *env) []*reply
}

// specErrorRows is the spec's error table, row by row.
var specErrorRows = []specErrorRow{
	{400, errNoPendingSetup, "Confirm without pending secret", "TwoFactorSetup/confirm_without_a_pending_setup", nil,
		func(t *testing.T, e *env) []*reply {
			c := e.client()
			e.signup(t, c, "ada@example.com")
			return []*reply{c.post("/api/2fa/confirm", obj{"code": "123456"})}
		}},
	{400, errInvalidCode, "Wrong confirmation code", "TwoFactorSetup/confirm_with_a_wrong_code", nil,
		func(t *testing.T, e *env) []*reply {
			c, _, secret := e.settingUp2FA(t)
			return []*reply{c.post("/api/2fa/confirm", obj{"code": e.wrongCode(t, secret)})}
		}},
	{400, errInvalid2FACode, "Wrong 2FA code at login", "TwoFactorLogin/a_wrong_code_keeps_the_pending_cookie", nil,
		func(t *testing.T, e *env) []*reply {
			_, _, secret, _ := e.twoFactorUser(t)
			b := e.pending(t)
			e.nextStep()
			return []*reply{b.verify(e.wrongCode(t, secret))}
		}},
	{400, errCodeUsed, "Replay: current step <= lastTotpStep", "TwoFactorLogin/a_code_cannot_be_used_twice_in_its_step", nil,
		func(t *testing.T, e *env) []*reply {
			code := e.usedCode(t)
			return []*reply{e.pending(t).verify(code)}
		}},
	{400, errInvalidRecovery, "Wrong recovery code", "TwoFactorLogin/recover_logs_in_and_spends_the_code", nil,
		func(t *testing.T, e *env) []*reply {
			e.twoFactorUser(t)
			b := e.pending(t)
			return []*reply{b.recover("aaaaaaaa-aaaaaaaa")}
		}},
	{400, err2FANotEnabled, "Regenerate or disable when 2FA is off", "TwoFactorSetup/regenerate_and_disable_need_2FA_on", nil,
		func(t *testing.T, e *env) []*reply {
			c := e.client()
			e.signup(t, c, "ada@example.com")
			return []*reply{c.post("/api/2fa/regenerate-codes", nil), c.post("/api/2fa/disable", obj{"password": goodPassword})}
		}},
	{400, errEmailRegistered, "Register with existing email", "EmailVerification/register_with_an_existing_email", nil,
		func(t *testing.T, e *env) []*reply {
			e.seed(t, "ada@example.com")
			return []*reply{e.client().post("/api/auth/register", obj{"email": "ada@example.com", "password": goodPassword, "name": "A"})}
		}},
	{400, errVerifyInvalid, "Verify link invalid or expired", "EmailVerification/an_expired_link", nil,
		func(t *testing.T, e *env) []*reply {
			e.signup(t, e.client(), "ada@example.com")
			tok := e.verifyToken(t, "ada@example.com")
			bad := e.client().get(verifyPath(tamper(tok)))
			e.clock.Advance(24*time.Hour + time.Millisecond)
			return []*reply{bad, e.client().get(verifyPath(tok))}
		}},
	{400, errVerifyNoUser, "Verify link, user missing", "EmailVerification/a_link_for_a_deleted_user", nil,
		func(t *testing.T, e *env) []*reply {
			u := e.signup(t, e.client(), "ada@example.com")
			tok := e.verifyToken(t, "ada@example.com")
			if err := e.users.Delete(e.ctx(), u.ID); err != nil {
				t.Fatalf("store: Delete: %v", err)
			}
			return []*reply{e.client().get(verifyPath(tok))}
		}},
	{400, errVerifyStale, "Verify link issued before email change", "EmailVerification/a_link_issued_before_an_email_change;_the_change's_own_link_works_at_once", nil,
		func(t *testing.T, e *env) []*reply {
			c := e.client()
			e.signup(t, c, "ada@example.com")
			tok := e.verifyToken(t, "ada@example.com")
			e.clock.Advance(time.Second)
			mustMessage(t, c.post("/api/auth/change-email", obj{"newEmail": "new@example.com", "password": goodPassword}), msgEmailChanged)
			return []*reply{e.client().get(verifyPath(tok))}
		}},
	{400, errEmailInUse, "Change email to a used address", "ChangeEmail/an_address_in_use,_compared_lowercase", nil,
		func(t *testing.T, e *env) []*reply {
			e.seed(t, "ada@example.com")
			e.seed(t, "bob@example.com")
			c := e.loggedIn(t, "ada@example.com")
			return []*reply{c.post("/api/auth/change-email", obj{"newEmail": "bob@example.com", "password": goodPassword})}
		}},
	{400, errPasswordsDiffer, "Reset: passwords differ", "PasswordReset/passwords_that_differ", nil,
		func(t *testing.T, e *env) []*reply {
			e.seed(t, "ada@example.com")
			tok := e.resetToken(t, "ada@example.com")
			return []*reply{e.client().post(resetPath(tok), obj{"password": newPassword, "confirmPassword": goodPassword})}
		}},
	{400, errResetInvalid, "Reset: token invalid, expired, or user missing", "PasswordReset/an_expired_link, PasswordReset/a_link_for_a_deleted_user", nil,
		func(t *testing.T, e *env) []*reply {
			u := e.seed(t, "ada@example.com")
			tok := e.resetToken(t, "ada@example.com")
			invalid := e.client().post(resetPath(tamper(tok)), resetBody(newPassword))
			e.clock.Advance(time.Hour + time.Millisecond)
			expired := e.client().post(resetPath(tok), resetBody(newPassword))
			fresh := e.resetToken(t, "ada@example.com")
			if err := e.users.Delete(e.ctx(), u.ID); err != nil {
				t.Fatalf("store: Delete: %v", err)
			}
			return []*reply{invalid, expired, e.client().post(resetPath(fresh), resetBody(newPassword))}
		}},
	{400, errResetUsed, "Reset: token already used", "PasswordReset/reset_replaces_the_password_once_and_ends_older_sessions", nil,
		func(t *testing.T, e *env) []*reply {
			e.seed(t, "ada@example.com")
			tok := e.resetToken(t, "ada@example.com")
			mustMessage(t, e.client().post(resetPath(tok), resetBody(newPassword)), msgPasswordReset)
			return []*reply{e.client().post(resetPath(tok), resetBody("yet another passphrase"))}
		}},
	{401, errInvalidCredentials, "Bad credentials at login", "TwoFactorLogin/login_with_a_wrong_password_or_unknown_email", nil,
		func(t *testing.T, e *env) []*reply {
			e.seed(t, "ada@example.com")
			c := e.client()
			return []*reply{c.login("ada@example.com", wrongPassword), c.login("nobody@example.com", goodPassword),
				c.post("/api/auth/login", obj{"email": "ada@example.com", "password": wrongPassword})}
		}},
	{401, errNoPending2FA, "No 2fa_pending cookie", "TwoFactorLogin/verify_without_a_pending_cookie", nil,
		func(t *testing.T, e *env) []*reply {
			c := e.client()
			return []*reply{c.verify("123456"), c.recover("aaaaaaaa-aaaaaaaa")}
		}},
	{401, err2FAExpired, "Pending token expired or invalid", "TwoFactorLogin/verify_after_the_pending_cookie_expired", nil,
		func(t *testing.T, e *env) []*reply {
			_, _, secret, _ := e.twoFactorUser(t)
			bad := e.client()
			bad.setCookie(auth.PendingCookie, "not-a-token")
			b := e.pending(t)
			e.clock.Advance(5*time.Minute + time.Second)
			return []*reply{bad.verify(e.now(t, secret)), b.verify(e.now(t, secret))}
		}},
	{401, errInvalidSession, "Pending user missing or 2FA not enabled", "TwoFactorLogin/verify_for_a_user_deleted_meanwhile, TwoFactorLogin/verify_after_2FA_was_disabled_meanwhile", nil,
		func(t *testing.T, e *env) []*reply {
			c, _, secret, _ := e.twoFactorUser(t)
			b := e.pending(t)
			mustMessage(t, c.post("/api/2fa/disable", obj{"password": goodPassword}), msg2FADisabled)
			e.nextStep()
			disabled := b.verify(e.now(t, secret))
			bob := e.seed(t, "bob@example.com")
			bc := e.loggedIn(t, "bob@example.com")
			bobSecret, _ := e.enable2FA(t, bc)
			x := e.client()
			pendingLogin(t, x, "bob@example.com")
			if err := e.users.Delete(e.ctx(), bob.ID); err != nil {
				t.Fatalf("store: Delete: %v", err)
			}
			e.nextStep()
			return []*reply{disabled, x.verify(e.now(t, bobSecret))}
		}},
	{401, errInvalidPassword, "Wrong password (disable, change email)", "TwoFactorSetup/disable_with_a_wrong_password, ChangeEmail/wrong_password", nil,
		func(t *testing.T, e *env) []*reply {
			c, _, _, _ := e.twoFactorUser(t)
			return []*reply{c.post("/api/2fa/disable", obj{"password": wrongPassword}),
				c.post("/api/auth/change-email", obj{"newEmail": "new@example.com", "password": wrongPassword})}
		}},
	{401, errNotAuthenticated, "No session (resend, change email)", "EmailVerification/resend_needs_a_session, ChangeEmail/needs_a_session", nil,
		func(t *testing.T, e *env) []*reply {
			c := e.client()
			return []*reply{c.post("/api/auth/resend-verification", nil),
				c.post("/api/auth/change-email", obj{"newEmail": "new@example.com", "password": goodPassword})}
		}},
	{429, "Too many ... Try again later.", "Rate limit exceeded", "RateLimits/*", []option{func(c *auth.Config) {
		one := auth.Limit{Max: 1, Window: time.Minute}
		c.Limits = auth.Limits{LoginIP: one, LoginEmail: one, Register: one, ResetIP: one, ResetEmail: one, Resend: one, TwoFactor: one, Password: one}
	}},
		func(t *testing.T, e *env) []*reply {
			var out []*reply
			twice := func(c *client, path string, body obj) {
				c.post(path, body)
				out = append(out, c.post(path, body))
			}
			twice(e.client(), "/api/login", obj{"email": "x@example.com", "password": wrongPassword})
			reg := e.client()
			twice(reg, "/api/auth/register", obj{"email": "ada@example.com", "password": goodPassword, "name": "Ada"})
			twice(e.client(), "/api/auth/forgot-password", obj{"email": "x@example.com"})
			twice(reg, "/api/auth/resend-verification", nil)
			return out
		}},
}

// specErrorTests walks the spec's error table: one test per row, named for
// its condition, that checks status, text and code.
var specErrorTests = func() []test {
	var tests []test
	for _, row := range specErrorRows {
		tests = append(tests, test{strings.ReplaceAll(row.cond, "/", "-"), func(s suite, t *testing.T) { s.specError(t, row) }})
	}
	return tests
}()

// specError makes row's condition happen and checks every reply: its
// status and text, the code of both, and for a 429 the form of the text
// and a retryAfter.
func (s suite) specError(t *testing.T, row specErrorRow) {
	t.Logf("spec 7: %d %q when %s; in depth: %s", row.status, row.text, row.cond, row.also)
	e := s.env(t, row.opts...)
	replies := row.run(t, e)
	if len(replies) == 0 {
		t.Fatal("the row made no request")
	}
	for _, r := range replies {
		if row.status == http.StatusTooManyRequests {
			if r.Status != http.StatusTooManyRequests {
				t.Errorf("%s: status %d, want 429", r, r.Status)
				continue
			}
			msg := r.str("error")
			if !strings.HasPrefix(msg, "Too many ") || !strings.HasSuffix(msg, " Try again later.") || r.str("retryAfter") == "" || len(r.JSON) != 3 {
				t.Errorf("%s: body %s, want {error \"Too many ... Try again later.\", code, retryAfter}", r, r.Body)
			}
			mustCode(t, r)
			continue
		}
		if r.Status != row.status || r.str("error") != row.text || len(r.JSON) != 2 {
			t.Errorf("%s: want %d {\"error\":%q, \"code\"}", r, row.status, row.text)
		}
		mustCode(t, r)
	}
}
