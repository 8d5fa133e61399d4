package auth

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/mail"
)

// TestConsoleMailerWarning: New warns when mail goes to a console mailer
// with Secure cookies (production), and not in an Insecure (development)
// configuration nor with another mailer.
func TestConsoleMailerWarning(t *testing.T) {
	const warning = "mail goes to a console mailer"
	for _, tc := range []struct {
		name     string
		insecure bool
		mailer   mail.Mailer
		warns    bool
	}{
		{"default mailer, Secure", false, nil, true},
		{"console mailer, Secure", false, mail.NewConsole(&bytes.Buffer{}), true},
		{"default mailer, Insecure", true, nil, false},
		{"captured mail, Secure", false, &mail.Capture{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			mustNewWith(t, func(c *Config) {
				c.Logger = slog.New(slog.NewTextHandler(&buf, nil))
				c.Insecure, c.Mailer = tc.insecure, tc.mailer
			})
			if got := strings.Contains(buf.String(), warning); got != tc.warns {
				t.Errorf("warned %v, want %v; log:\n%s", got, tc.warns, buf.String())
			}
			if tc.warns && !strings.Contains(buf.String(), "level=WARN") {
				t.Errorf("the warning is not at WARN:\n%s", buf.String())
			}
		})
	}
}
