package authtest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

func verifyPath(tok string) string { return "/api/auth/verify-email/" + url.PathEscape(tok) }

func (s suite) registerStoresUnverifiedUser(t *testing.T) {
	e := s.env(t)
	c := e.client()
	r := c.post("/api/auth/register", obj{"email": "Ada@Example.COM", "password": goodPassword, "name": "Ada Lovelace"})
	mustMessage(t, r, msgRegistered)
	mustSessionCookie(t, r, false, false)
	u := e.user(t, "ada@example.com")
	if u.Name != "Ada Lovelace" || !u.EmailVerifiedAt.IsZero() || u.TwoFactorEnabled {
		t.Errorf("store: name %q, emailVerifiedAt %v, twoFactorEnabled %v; want %q, null, false",
			u.Name, u.EmailVerifiedAt, u.TwoFactorEnabled, "Ada Lovelace")
	}
	if u.PasswordHash == "" || strings.Contains(u.PasswordHash, goodPassword) {
		t.Errorf("store: password %q is not a hash", u.PasswordHash)
	}
	e.noUser(t, "Ada@Example.COM")
	e.mustOnlyLinkMail(t, "ada@example.com", mail.KindVerifyEmail, "/verify-email/", "24 hours")
	mustBeSignedIn(t, c, "ada@example.com")
	if me := c.me(); me.JSON["emailVerified"] != false {
		t.Errorf("%s: want emailVerified false", me)
	}
}

func (s suite) registerExistingEmail(t *testing.T) {
	e := s.env(t)
	first := e.signup(t, e.client(), "ada@example.com")
	c := e.client()
	r := c.post("/api/auth/register", obj{"email": "ADA@example.com", "password": newPassword, "name": "Mallory"})
	mustStatus(t, r, http.StatusBadRequest, errEmailRegistered)
	if r.setCookie(sessionCookie) != nil {
		t.Errorf("%s: a refused registration sets a session cookie", r)
	}
	mustBeSignedOut(t, c)
	if got := e.user(t, "ada@example.com"); got.ID != first.ID || got.Name != first.Name || got.PasswordHash != first.PasswordHash {
		t.Errorf("store: the existing user changed: %+v", got)
	}
	if n := e.mailCount(t); n != 1 {
		t.Errorf("%d mails, want 1 (the first registration's)", n)
	}
}

func (s suite) verifyLinkVerifies(t *testing.T) {
	e := s.env(t, noIdle)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	tok := e.verifyToken(t, "ada@example.com")
	e.clock.Advance(time.Hour)
	mustMessage(t, e.client().get(verifyPath(tok)), msgEmailVerified)
	mustTime(t, "emailVerifiedAt", e.byID(t, u.ID).EmailVerifiedAt, e.clock.Now())
	if me := c.me(); me.JSON["emailVerified"] != true {
		t.Errorf("%s: want emailVerified true", me)
	}
	// The link of a verified address says it is verified already.
	at := e.byID(t, u.ID).EmailVerifiedAt
	e.clock.Advance(time.Minute)
	r := e.client().get(verifyPath(tok))
	mustMessage(t, r, msgAlreadyVerified)
	if !strings.Contains(strings.ToLower(r.str("message")), "already verified") {
		t.Errorf("%s: the message must say already verified", r)
	}
	if got := e.byID(t, u.ID).EmailVerifiedAt; !got.Equal(at) {
		t.Errorf("store: emailVerifiedAt moved from %s to %s", at, got)
	}
}

func (s suite) verifyLinkInvalid(t *testing.T) {
	e := s.env(t)
	u := e.signup(t, e.client(), "ada@example.com")
	tok := e.verifyToken(t, "ada@example.com")
	for _, bad := range []string{"garbage", tamper(tok), tok + "x", tok[:len(tok)-1], strings.Repeat("A", 200)} {
		mustStatus(t, e.client().get(verifyPath(bad)), http.StatusBadRequest, errVerifyInvalid)
	}
	if !e.byID(t, u.ID).EmailVerifiedAt.IsZero() {
		t.Errorf("store: a bad link verified the address")
	}
}

func (s suite) verifyLinkLifetime(t *testing.T) {
	e := s.env(t)
	e.signup(t, e.client(), "ada@example.com")
	tok := e.verifyToken(t, "ada@example.com")
	e.clock.Advance(24*time.Hour - time.Millisecond)
	mustMessage(t, e.client().get(verifyPath(tok)), msgEmailVerified)
}

func (s suite) verifyLinkExpired(t *testing.T) {
	e := s.env(t)
	u := e.signup(t, e.client(), "ada@example.com")
	tok := e.verifyToken(t, "ada@example.com")
	e.clock.Advance(24*time.Hour + time.Millisecond)
	mustStatus(t, e.client().get(verifyPath(tok)), http.StatusBadRequest, errVerifyInvalid)
	if !e.byID(t, u.ID).EmailVerifiedAt.IsZero() {
		t.Errorf("store: an expired link verified the address")
	}
}

func (s suite) verifyLinkDeletedUser(t *testing.T) {
	e := s.env(t)
	u := e.signup(t, e.client(), "ada@example.com")
	tok := e.verifyToken(t, "ada@example.com")
	if err := e.users.Delete(e.ctx(), u.ID); err != nil {
		t.Fatalf("store: Delete: %v", err)
	}
	mustStatus(t, e.client().get(verifyPath(tok)), http.StatusBadRequest, errVerifyNoUser)
}

func (s suite) verifyLinkBeforeChange(t *testing.T) {
	e := s.env(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	old := e.verifyToken(t, "ada@example.com")
	// The clock stands still: the change happens in the same
	// millisecond as both links (SECURITY.md deviation 1).
	mustMessage(t, c.post("/api/auth/change-email", obj{"newEmail": "new@example.com", "password": goodPassword}), msgEmailChanged)
	mustStatus(t, e.client().get(verifyPath(old)), http.StatusBadRequest, errVerifyStale)
	fresh := e.verifyToken(t, "new@example.com")
	mustMessage(t, e.client().get(verifyPath(fresh)), msgEmailVerified)
	got := e.byID(t, u.ID)
	if got.Email != "new@example.com" {
		t.Errorf("store: email %q, want new@example.com", got.Email)
	}
	mustTime(t, "emailVerifiedAt", got.EmailVerifiedAt, e.clock.Now())
	mustStatus(t, e.client().get(verifyPath(old)), http.StatusBadRequest, errVerifyStale)
}

func (s suite) verifyLinkBeforeChangeBack(t *testing.T) {
	e := s.env(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	old := e.verifyToken(t, "ada@example.com")
	e.clock.Advance(time.Second)
	mustMessage(t, c.post("/api/auth/change-email", obj{"newEmail": "new@example.com", "password": goodPassword}), msgEmailChanged)
	e.clock.Advance(time.Second)
	mustMessage(t, c.post("/api/auth/change-email", obj{"newEmail": "ada@example.com", "password": goodPassword}), msgEmailChanged)
	e.clock.Advance(time.Second)
	mustStatus(t, e.client().get(verifyPath(old)), http.StatusBadRequest, errVerifyStale)
	if !e.byID(t, u.ID).EmailVerifiedAt.IsZero() {
		t.Errorf("store: a link from before the change verified the address")
	}
	e.verifyEmailFromMail(t, e.client(), "ada@example.com")
}

func (s suite) resendNeedsSession(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	mustStatus(t, e.client().post("/api/auth/resend-verification", nil), http.StatusUnauthorized, errNotAuthenticated)
	if n := e.mailCount(t); n != 0 {
		t.Errorf("%d mails, want none", n)
	}
}

func (s suite) resendMailsFreshLink(t *testing.T) {
	e := s.env(t)
	c := e.client()
	e.signup(t, c, "ada@example.com")
	first := e.verifyToken(t, "ada@example.com")
	e.clock.Advance(time.Second)
	mustMessage(t, c.post("/api/auth/resend-verification", nil), msgVerificationSent)
	if n := len(e.mails(t, "ada@example.com", mail.KindVerifyEmail)); n != 2 {
		t.Fatalf("%d verification mails, want 2", n)
	}
	second := e.verifyToken(t, "ada@example.com")
	if second == first {
		t.Errorf("resend mailed the same link again")
	}
	mustMessage(t, c.postForm("/api/auth/resend-verification", url.Values{}), msgVerificationSent)
	if n := len(e.mails(t, "ada@example.com", mail.KindVerifyEmail)); n != 3 {
		t.Fatalf("%d verification mails, want 3", n)
	}
	mustMessage(t, e.client().get(verifyPath(second)), msgEmailVerified)
}

func (s suite) resendWhenVerified(t *testing.T) {
	e := s.env(t)
	c := e.client()
	e.signup(t, c, "ada@example.com")
	e.verifyEmailFromMail(t, c, "ada@example.com")
	n := e.mailCount(t)
	r := c.post("/api/auth/resend-verification", nil)
	mustMessage(t, r, msgAlreadyVerified)
	if got := e.mailCount(t); got != n {
		t.Errorf("%d mails after resend for a verified address, want %d", got, n)
	}
}

// mustUnchanged checks that the stored record of before.ID still equals
// before.
func (e *env) mustUnchanged(t *testing.T, before *user.User) {
	t.Helper()
	got := e.byID(t, before.ID)
	if !sameUser(got, before) {
		t.Errorf("store: user %s changed:\n got %+v\nwant %+v", before.ID, got, before)
	}
}
