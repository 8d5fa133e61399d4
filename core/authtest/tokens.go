package authtest

import (
	"net/http"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
)

// tokens holds one live token of every kind.
type tokens struct{ pending, session, verify, reset string }

// everyToken returns one live token of every kind for ada, who has 2FA on
// and an unverified address, and her id.
func (e *env) everyToken(t *testing.T) (tokens, string) {
	t.Helper()
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	var tk tokens
	tk.session = c.cookie(sessionCookie).Value
	tk.verify = e.verifyToken(t, "ada@example.com")
	e.enable2FA(t, c)
	b := e.client()
	tk.pending = pendingLogin(t, b, "ada@example.com").setCookie(auth.PendingCookie).Value
	tk.reset = e.resetToken(t, "ada@example.com")
	return tk, u.ID
}

func (s suite) tokenAsVerifyLink(t *testing.T) {
	e := s.env(t)
	tk, id := e.everyToken(t)
	for name, tok := range map[string]string{"2fa_pending": tk.pending, "session": tk.session, "reset": tk.reset} {
		r := e.client().get(verifyPath(tok))
		if r.Status != http.StatusBadRequest || r.str("error") != errVerifyInvalid {
			t.Errorf("%s token as a verification link: %s, want 400 %q", name, r, errVerifyInvalid)
		}
	}
	if !e.byID(t, id).EmailVerifiedAt.IsZero() {
		t.Errorf("store: another purpose's token verified the address")
	}
	mustMessage(t, e.client().get(verifyPath(tk.verify)), msgEmailVerified)
}

func (s suite) tokenAsResetLink(t *testing.T) {
	e := s.env(t)
	tk, id := e.everyToken(t)
	before := e.byID(t, id)
	for name, tok := range map[string]string{"2fa_pending": tk.pending, "session": tk.session, "verify": tk.verify} {
		r := e.client().post(resetPath(tok), resetBody(newPassword))
		if r.Status != http.StatusBadRequest || r.str("error") != errResetInvalid {
			t.Errorf("%s token as a reset link: %s, want 400 %q", name, r, errResetInvalid)
		}
	}
	e.mustUnchanged(t, before)
}

func (s suite) tokenAsPendingCookie(t *testing.T) {
	e := s.env(t)
	tk, _ := e.everyToken(t)
	for name, tok := range map[string]string{"session": tk.session, "verify": tk.verify, "reset": tk.reset} {
		b := e.client()
		b.setCookie(auth.PendingCookie, tok)
		r := b.verify("123456")
		if r.Status != http.StatusUnauthorized || r.str("error") != err2FAExpired {
			t.Errorf("%s token as the 2fa_pending cookie: %s, want 401 %q", name, r, err2FAExpired)
		}
	}
}

func (s suite) tokenAsSessionCookie(t *testing.T) {
	e := s.env(t)
	tk, _ := e.everyToken(t)
	for name, tok := range map[string]string{"2fa_pending": tk.pending, "verify": tk.verify, "reset": tk.reset} {
		b := e.client()
		b.setCookie(sessionCookie, tok)
		r := b.me()
		if r.Status != http.StatusUnauthorized || r.str("error") != errNotAuthenticated {
			t.Errorf("%s token as the session cookie: %s, want 401 %q", name, r, errNotAuthenticated)
		}
	}
}
