package auth

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/i18n"
)

// TestCodes: every condition has a lower snake_case code of its own, a
// real status and a text; the codes of a status and text are unique; the
// spec's error texts are there to the letter.
func TestCodes(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	seen := map[Code]bool{}
	texts := map[string]Code{}
	for _, e := range Codes() {
		if !snake.MatchString(string(e.Code)) {
			t.Errorf("code %q is not lower snake_case", e.Code)
		}
		if seen[e.Code] {
			t.Errorf("code %q defined twice", e.Code)
		}
		seen[e.Code] = true
		if http.StatusText(e.Status) == "" || e.Status < 400 {
			t.Errorf("%s: status %d", e.Code, e.Status)
		}
		if e.Message == "" {
			t.Errorf("%s: no text", e.Code)
		}
		key := fmt.Sprint(e.Status, e.Message)
		if other, ok := texts[key]; ok {
			t.Errorf("%s and %s answer the same %d %q: a client could not tell them apart", other, e.Code, e.Status, e.Message)
		}
		texts[key] = e.Code
	}
	// The spec's error table (docs/errors.md), to the letter.
	for _, want := range []struct {
		status int
		text   string
	}{
		{400, "No pending 2FA setup"}, {400, "Invalid code"}, {400, "Invalid 2FA code"}, {400, "Code already used"},
		{400, "Invalid recovery code"}, {400, "2FA is not enabled"}, {400, "Email already registered"},
		{400, "Invalid or expired verification link"}, {400, "Invalid verification link"},
		{400, "This verification link is no longer valid"}, {400, "Email already in use"}, {400, "Passwords do not match"},
		{400, "Invalid or expired reset link"}, {400, "This reset link has already been used"},
		{401, "Invalid credentials"}, {401, "No pending 2FA session"}, {401, "2FA session expired"},
		{401, "Invalid session"}, {401, "Invalid password"}, {401, "Not authenticated"},
	} {
		if _, ok := texts[fmt.Sprint(want.status, want.text)]; !ok {
			t.Errorf("spec section 7's %d %q has no code", want.status, want.text)
		}
	}
	// Codes returns copies: changing one changes nothing of authkit's.
	c := Codes()
	c[0].Message = "changed"
	if Codes()[0].Message == "changed" {
		t.Error("Codes returned authkit's own values")
	}
}

// TestErrorIs: errors match by code, through wrapping and with data set.
func TestErrorIs(t *testing.T) {
	limited := *ErrTooManyLogins
	limited.RetryAfter = time.Unix(1, 0)
	wrapped := fmt.Errorf("login: %w", &limited)
	if !errors.Is(wrapped, ErrTooManyLogins) {
		t.Error("a wrapped 429 with RetryAfter is not ErrTooManyLogins")
	}
	if errors.Is(wrapped, ErrTooManyResets) {
		t.Error("a login 429 is ErrTooManyResets")
	}
	var e *Error
	if !errors.As(wrapped, &e) || e.RetryAfter != time.Unix(1, 0) || e.Status != 429 {
		t.Errorf("errors.As: %+v", e)
	}
	if got := ErrWrongFieldType.with("email must be a string", "wrong_field_type.string", map[string]string{"field": "email"}); !errors.Is(got, ErrWrongFieldType) || got.Message != "email must be a string" || ErrWrongFieldType.Message == got.Message {
		t.Errorf("with: %+v (the sentinel is %+v)", got, ErrWrongFieldType)
	}
}

// TestAsError: what each kind of error answers with.
func TestAsError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want *Error
	}{
		{nil, nil},
		{ErrInvalidCredentials, ErrInvalidCredentials},
		{fmt.Errorf("x: %w", ErrCodeUsed), ErrCodeUsed},
		{fmt.Errorf("rate limit: %w", errors.Join(errBackend, errors.New("dial"))), ErrUnavailable},
		{fmt.Errorf("query: %w", errors.New("syntax error")), ErrInternal},
	} {
		if got := AsError(tc.err); got != tc.want && (got == nil || tc.want == nil || got.Code != tc.want.Code) {
			t.Errorf("AsError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestErrorTableDocumented: docs/errors.md lists every condition, with its
// status, code and text, and nothing else, so the published table cannot
// drift from the code. (Skipped outside the repository: a module zip has
// no docs folder.)
func TestErrorTableDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/errors.md")
	if os.IsNotExist(err) {
		t.Skip("docs/errors.md is not beside this module (outside the repository)")
	}
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| (\\d{3}) \\| `([a-z0-9_]+)` \\| (.+?) \\|")
	documented := map[Code]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		documented[Code(m[2])] = m[1] + " " + strings.TrimSpace(m[3])
	}
	for _, e := range Codes() {
		want := fmt.Sprint(e.Status, " ", e.Message)
		if got, ok := documented[e.Code]; !ok || got != want {
			t.Errorf("docs/errors.md: `%s` is %q, want a row | %d | `%s` | %s |", e.Code, got, e.Status, e.Code, e.Message)
		}
		delete(documented, e.Code)
	}
	for code := range documented {
		t.Errorf("docs/errors.md documents `%s`, which authkit does not answer", code)
	}
}

// TestGermanCoversCodes: the shipped German catalog has a text for every
// condition, and for every variant key the code uses, so a German answer
// never falls back to English.
func TestGermanCoversCodes(t *testing.T) {
	cat := i18n.New()
	if err := cat.Add(i18n.German()); err != nil {
		t.Fatal(err)
	}
	de := cat.Match("de")
	for _, e := range Codes() {
		if de.Text(string(e.Code), nil) == "" {
			t.Errorf("German has no text for %s", e.Code)
		}
	}
	for _, key := range []string{"invalid_characters.body", "invalid_json.object", "wrong_field_type.string",
		"wrong_field_type.boolean", "password_too_long.bytes"} {
		if de.Text(key, nil) == "" {
			t.Errorf("German has no text for the variant %s", key)
		}
	}
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{ErrInvalidCredentials, "E-Mail-Adresse oder Passwort ist falsch"},
		{ErrWrongFieldType.with("email must be a string", "wrong_field_type.string", map[string]string{"field": "email"}), "email muss eine Zeichenkette sein"},
		{ErrPasswordTooShort.with("Password must be at least 12 characters", "", map[string]string{"min": "12"}), "Das Passwort muss mindestens 12 Zeichen lang sein"},
	} {
		if got := tc.err.translate(de); got != tc.want {
			t.Errorf("%s in German: %q, want %q", tc.err.Code, got, tc.want)
		}
		if got := tc.err.translate(nil); got != tc.err.Message {
			t.Errorf("%s in English: %q, want %q", tc.err.Code, got, tc.err.Message)
		}
	}
}
