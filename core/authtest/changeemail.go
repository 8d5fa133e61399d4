package authtest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/mail"
)

func (s suite) changeEmailNeedsSession(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	mustStatus(t, e.client().post("/api/auth/change-email", obj{"newEmail": "new@example.com", "password": goodPassword}),
		http.StatusUnauthorized, errNotAuthenticated)
	e.noUser(t, "new@example.com")
}

func (s suite) changeEmailWrongPassword(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	c := e.loggedIn(t, "ada@example.com")
	before, sent := e.byID(t, u.ID), e.mailCount(t) // the login's new-device notice
	mustStatus(t, c.post("/api/auth/change-email", obj{"newEmail": "new@example.com", "password": wrongPassword}),
		http.StatusUnauthorized, errInvalidPassword)
	e.mustUnchanged(t, before)
	e.noUser(t, "new@example.com")
	if n := e.mailCount(t) - sent; n != 0 {
		t.Errorf("%d mails, want none", n)
	}
}

func (s suite) changeEmailAddressInUse(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	bob := e.seed(t, "bob@example.com")
	c := e.loggedIn(t, "ada@example.com")
	before, bobBefore, sent := e.byID(t, u.ID), e.byID(t, bob.ID), e.mailCount(t)
	mustStatus(t, c.post("/api/auth/change-email", obj{"newEmail": "BOB@Example.com", "password": goodPassword}),
		http.StatusBadRequest, errEmailInUse)
	e.mustUnchanged(t, before)
	e.mustUnchanged(t, bobBefore)
	if n := e.mailCount(t) - sent; n != 0 {
		t.Errorf("%d mails, want none", n)
	}
}

func (s suite) changeEmailChanges(t *testing.T) {
	e := s.env(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	e.verifyEmailFromMail(t, c, "ada@example.com")
	other := e.loggedIn(t, "ada@example.com")
	e.clock.Advance(time.Minute)
	r := c.post("/api/auth/change-email", obj{"newEmail": "Ada.New@Example.COM", "password": goodPassword})
	mustMessage(t, r, msgEmailChanged)
	got := e.byID(t, u.ID)
	if got.Email != "ada.new@example.com" || !got.EmailVerifiedAt.IsZero() {
		t.Errorf("store: email %q, emailVerifiedAt %v; want ada.new@example.com, null", got.Email, got.EmailVerifiedAt)
	}
	mustTime(t, "emailChangedAt", got.EmailChangedAt, e.clock.Now())
	e.noUser(t, "ada@example.com")
	if got.PasswordHash != u.PasswordHash || got.TwoFactorEnabled {
		t.Errorf("store: change-email touched other fields")
	}
	linkToken(t, e.lastMail(t, "ada.new@example.com", mail.KindVerifyEmail), "/verify-email/", "24 hours")
	notice := e.lastMail(t, "ada@example.com", mail.KindEmailChanged)
	if notice.Link != "" && strings.Contains(notice.Link, "/verify-email/") {
		t.Errorf("the notice to the old address carries a verification link %q", notice.Link)
	}
	mustBeSignedIn(t, c, "ada.new@example.com")
	mustBeSignedOut(t, other)
	mustStatus(t, e.client().login("ada@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
	mustLogin(t, e.client(), "ada.new@example.com", goodPassword)
	e.verifyEmailFromMail(t, e.client(), "ada.new@example.com")
}
