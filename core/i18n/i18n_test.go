package i18n

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"golang.org/x/text/language"
)

func german(t *testing.T) *Catalog {
	t.Helper()
	c := New()
	if err := c.Add(German()); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMatch: Accept-Language picks German only when the header prefers it
// to English; regions and q-values are the matcher's.
func TestMatch(t *testing.T) {
	c := german(t)
	for header, want := range map[string]string{
		"":                        "",
		"de":                      "de",
		"de-AT":                   "de",
		"de-CH, en;q=0.5":         "de",
		"en-US,en;q=0.9,de;q=0.8": "",
		"fr-FR, de;q=0.7":         "de",
		"fr-FR, fr;q=0.9":         "",
		"*":                       "",
		"not a header !!!":        "",
		"en, de":                  "",
		"de;q=0, en":              "",
	} {
		got := ""
		if l := c.Match(header); l != nil {
			got = l.Tag().String()
		}
		if got != want {
			t.Errorf("Match(%q) = %q, want %q", header, got, want)
		}
	}
	var none *Catalog
	if none.Match("de") != nil {
		t.Error("a nil catalog matched a language")
	}
}

// TestGermanComplete: the shipped German catalog has a text for every
// message key and mail kind authkit has, units for every duration, and
// months for dates. (core/auth's tests check it against auth.Codes.)
func TestGermanComplete(t *testing.T) {
	l := german(t).Lookup(language.German)
	if l == nil {
		t.Fatal("no German")
	}
	for _, kind := range []string{"verify_email", "reset_password", "password_changed", "password_reset_done", "two_factor_disabled", "email_changed",
		"two_factor_enabled", "recovery_codes_regenerated", "recovery_code_used", "new_sign_in", "two_factor_code_reused",
		"passkey_added", "passkey_deleted", "two_factor_email_code", "email_sign_in", "identity_linked", "identity_unlinked"} {
		if _, ok := l.Mail(kind); !ok {
			t.Errorf("no German mail %q", kind)
		}
	}
	for _, key := range []string{"registered", "email_verified", "already_verified", "verification_sent", "email_changed",
		"forgot_sent", "password_reset", "password_changed", "logged_out", "logged_out_everywhere", "two_factor_enabled", "two_factor_disabled",
		"email_code_sent", "email_sign_in_sent"} {
		if l.Text(key, nil) == "" {
			t.Errorf("no German text %q", key)
		}
	}
}

// TestDuration: durations in German with CLDR's plural forms.
func TestDuration(t *testing.T) {
	l := german(t).Lookup(language.German)
	for d, want := range map[time.Duration]string{
		24 * time.Hour:                        "24 Stunden",
		time.Hour:                             "1 Stunde",
		90 * time.Minute:                      "1 Stunde und 30 Minuten",
		time.Hour + time.Minute + time.Second: "1 Stunde, 1 Minute und 1 Sekunde",
		48 * time.Hour:                        "2 Tage",
		5 * time.Minute:                       "5 Minuten",
		time.Millisecond:                      "",
	} {
		if got := l.Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
	var none *Language
	if none.Duration(time.Hour) != "" || none.Time(time.Now()) != "" || none.Text("x", nil) != "" {
		t.Error("a nil language worded something")
	}
}

// TestTime: dates with German month names.
func TestTime(t *testing.T) {
	l := german(t).Lookup(language.German)
	at := time.Date(2031, time.March, 14, 15, 9, 26, 0, time.UTC)
	if got, want := l.Time(at), "14. März 2031 um 15:09 UTC"; got != want {
		t.Errorf("Time = %q, want %q", got, want)
	}
}

// TestText: variables fill in; a missing key is "" (the caller's English).
func TestText(t *testing.T) {
	l := german(t).Lookup(language.German)
	if got := l.Text("wrong_field_type.string", map[string]string{"field": "email"}); got != "email muss eine Zeichenkette sein" {
		t.Errorf("Text = %q", got)
	}
	if got := l.Text("no_such_key", nil); got != "" {
		t.Errorf("missing key: %q", got)
	}
}

// TestAddRefuses: what a catalog file cannot be.
func TestAddRefuses(t *testing.T) {
	for name, l := range map[string]Language{
		"bad tag":            {Lang: "not a tag!"},
		"English":            {Lang: "en-GB"},
		"incomplete mail":    {Lang: "fr", Mails: map[string]Mail{"verify_email": {Subject: "Vérifiez"}}},
		"unit without other": {Lang: "fr", Units: map[string]map[string]string{"hour": {"one": "{n} heure"}}},
		"months missing":     {Lang: "fr", DateLayout: "2 January 2006"},
	} {
		if err := New().Add(l); err == nil {
			t.Errorf("%s: Add accepted it", name)
		}
	}
}

// TestLoadFS: an app's own catalog files, and unknown fields refused.
func TestLoadFS(t *testing.T) {
	fsys := fstest.MapFS{
		"locales/fr.json": {Data: []byte(`{"language":"fr","texts":{"invalid_credentials":"Identifiants invalides"}}`)},
		"locales/xx.txt":  {Data: []byte(`not json`)},
	}
	c := New()
	if err := c.LoadFS(fsys, "locales/*.json"); err != nil {
		t.Fatal(err)
	}
	if l := c.Match("fr"); l == nil || l.Text("invalid_credentials", nil) != "Identifiants invalides" {
		t.Fatalf("French not loaded: %+v", l)
	}
	bad := fstest.MapFS{"fr.json": {Data: []byte(`{"language":"fr","textz":{}}`)}}
	if err := New().LoadFS(bad, "*.json"); err == nil || !strings.Contains(err.Error(), "fr.json") {
		t.Fatalf("unknown field: %v", err)
	}
	if got := len(c.Languages()); got != 1 {
		t.Fatalf("%d languages", got)
	}
}
