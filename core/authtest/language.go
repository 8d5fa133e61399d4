package authtest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/i18n"
	"github.com/authkit-go/authkit/core/mail"
)

func withGerman(t *testing.T) option {
	cat := i18n.New()
	if err := cat.Add(i18n.German()); err != nil {
		t.Fatalf("i18n: %v", err)
	}
	return func(c *auth.Config) { c.Catalog = cat }
}

func (s suite) germanRouteAndMail(t *testing.T) {
	e := s.env(t, withGerman(t)) // the default limits: the 429 below is the per-email one
	de := e.client()
	de.header.Set("Accept-Language", "de-DE,de;q=0.9,en;q=0.5")

	r := de.post("/api/auth/register", obj{"email": "ada@example.com", "password": goodPassword, "name": "Ada"})
	if r.Status != http.StatusOK || r.str("message") != "Registrierung erfolgreich. Bitte bestätigen Sie Ihre E-Mail-Adresse mit dem Link, den wir Ihnen geschickt haben." {
		t.Errorf("%s: want 200 and the German message", r)
	}
	if r.Header.Get("Content-Language") != "de" || r.Header.Get("Vary") != "Accept-Language" {
		t.Errorf("%s: Content-Language %q, Vary %q; want de and Accept-Language", r, r.Header.Get("Content-Language"), r.Header.Get("Vary"))
	}
	m := e.lastMail(t, "ada@example.com", mail.KindVerifyEmail)
	if !strings.Contains(m.Subject, "Bestätigen Sie Ihre E-Mail-Adresse (Link 24 Stunden gültig)") ||
		!strings.Contains(m.Text, "Hallo Ada,") || !strings.Contains(m.Text, "Der Link ist 24 Stunden gültig.") ||
		!strings.Contains(m.HTML, `<html lang="de">`) || !strings.Contains(m.Text, m.Link) {
		t.Errorf("verification mail not in German:\n%s\n%s", m.Subject, m.Text)
	}

	// Errors: the text in German, the code the same; a field name and a
	// bound are filled in.
	r = de.login("ada@example.com", "wrong password")
	if r.Status != http.StatusUnauthorized || r.str("error") != "E-Mail-Adresse oder Passwort ist falsch" || r.str("code") != "invalid_credentials" {
		t.Errorf("%s: want 401 in German with code invalid_credentials", r)
	}
	r = de.postRaw("/api/auth/forgot-password", "application/json", []byte(`{"email":7}`))
	if r.Status != http.StatusBadRequest || r.str("error") != "email muss eine Zeichenkette sein" || r.str("code") != "wrong_field_type" {
		t.Errorf("%s: want 400 in German naming the field", r)
	}
	r = de.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": "short"})
	if r.Status != http.StatusBadRequest || r.str("error") != "Das Passwort muss mindestens 8 Zeichen lang sein" || r.str("code") != "password_too_short" {
		t.Errorf("%s: want 400 in German with the bound", r)
	}
	// A 429 in German, with its retryAfter.
	for range 5 {
		de.login("ada@example.com", "wrong again")
	}
	r = de.login("ada@example.com", "wrong again")
	if r.Status != http.StatusTooManyRequests || r.str("error") != "Zu viele Anmeldeversuche. Bitte versuchen Sie es später erneut." ||
		r.str("code") != "too_many_login_attempts" || r.str("retryAfter") == "" {
		t.Errorf("%s: want 429 in German", r)
	}

	// Another browser preferring English (or a language the catalog lacks)
	// gets the spec's texts, and so does a notice mailed in its request.
	en := e.client()
	en.header.Set("Accept-Language", "fr-FR, en;q=0.8")
	mustMessage(t, en.post("/api/auth/forgot-password", obj{"email": "ada@example.com"}), msgForgotSent)
	if m := e.lastMail(t, "ada@example.com", mail.KindResetPassword); !strings.HasPrefix(m.Text, "Hi Ada,") {
		t.Errorf("reset mail of an English request not in English:\n%s", m.Text)
	}
}

// englishWithoutOptIn: without Config.Catalog, Accept-Language changes
// nothing: no Vary, no Content-Language, the spec's texts.
func (s suite) englishWithoutOptIn(t *testing.T) {
	e := s.env(t)
	c := e.client()
	c.header.Set("Accept-Language", "de")
	r := c.login("nobody@example.com", "whatever password")
	mustStatus(t, r, http.StatusUnauthorized, errInvalidCredentials)
	if r.Header.Get("Content-Language") != "" || r.Header.Get("Vary") != "" {
		t.Errorf("%s: Content-Language %q, Vary %q without a catalog", r, r.Header.Get("Content-Language"), r.Header.Get("Vary"))
	}
}
