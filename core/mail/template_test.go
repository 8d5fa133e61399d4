package mail

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var eventTime = time.Date(2025, 3, 1, 14, 5, 0, 0, time.UTC)

func TestDefaultTemplatesRender(t *testing.T) {
	const link = "https://app.example.com/x/tok-123"
	for _, tc := range []struct {
		kind    Kind
		data    Data
		subject string
		want    []string // in Text and in HTML
	}{
		{
			KindVerifyEmail, Data{Link: link, Expiry: 24 * time.Hour},
			"Acme: Verify your email address (link valid for 24 hours)",
			[]string{link, "expires in 24 hours", "Hi Ada,", "at Acme"},
		},
		{
			KindVerifyEmail, Data{Link: link}, // Expiry defaults to the spec's
			"Acme: Verify your email address (link valid for 24 hours)",
			[]string{link, "expires in 24 hours"},
		},
		{
			KindResetPassword, Data{Link: link, Expiry: time.Hour},
			"Acme: Reset your password (link valid for 1 hour)",
			[]string{link, "expires in 1 hour and works once", "did not ask for this"},
		},
		{
			KindResetPassword, Data{Link: link},
			"Acme: Reset your password (link valid for 1 hour)",
			[]string{link, "expires in 1 hour"},
		},
		{
			KindPasswordChanged, Data{Time: eventTime, Link: link},
			"Acme: Your password was changed",
			[]string{"was changed on 1 March 2025 at 14:05 UTC", "If you did not", "reset it now at", link},
		},
		{
			KindPasswordResetDone, Data{Time: eventTime},
			"Acme: Your password was reset",
			[]string{"was reset on 1 March 2025 at 14:05 UTC", "If you did not", "secure your email account"},
		},
		{
			KindTwoFactorDisabled, Data{Time: eventTime},
			"Acme: Two-factor authentication was turned off",
			[]string{"turned off for your account at Acme on 1 March 2025 at 14:05 UTC", "If you did not", "turn two-factor authentication back on"},
		},
		{
			KindEmailChanged, Data{Time: eventTime, NewEmail: "new@example.org"},
			"Acme: Your email address was changed",
			[]string{"was changed to new@example.org on 1 March 2025 at 14:05 UTC", "If you did not", "contact support"},
		},
		{
			KindTwoFactorEnabled, Data{Time: eventTime, Link: link},
			"Acme: Two-factor authentication was turned on",
			[]string{"turned on for your account at Acme on 1 March 2025 at 14:05 UTC", "If you did not", "reset your password now at", link},
		},
		{
			KindRecoveryCodesRegenerated, Data{Time: eventTime},
			"Acme: Your recovery codes were replaced",
			[]string{"New recovery codes were made for your account at Acme on 1 March 2025 at 14:05 UTC", "The earlier codes no longer work", "If you did not"},
		},
		{
			KindRecoveryCodeUsed, Data{Time: eventTime, IP: "203.0.113.9", CodesLeft: 7},
			"Acme: A recovery code was used to sign in",
			[]string{"used to sign in to your account at Acme on 1 March 2025 at 14:05 UTC from 203.0.113.9", "You have 7 recovery codes left", "If you did not"},
		},
		{
			KindRecoveryCodeUsed, Data{CodesLeft: 1},
			"Acme: A recovery code was used to sign in",
			[]string{"You have 1 recovery code left; each works once. Make new ones soon"},
		},
		{
			KindNewSignIn, Data{Time: eventTime, IP: "203.0.113.9", UserAgent: "Firefox/140.0 <b>"},
			"Acme: New sign-in to your account",
			[]string{"was signed in to on 1 March 2025 at 14:05 UTC from a device or browser that had not signed in to it before", "Address: 203.0.113.9", "If it was not"},
		},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			tc.data.To, tc.data.Name, tc.data.AppName = "ada@example.com", "Ada", "Acme"
			m, err := DefaultTemplates().Render(tc.kind, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if m.Subject != tc.subject {
				t.Errorf("Subject = %q, want %q", m.Subject, tc.subject)
			}
			if m.To != "ada@example.com" || m.Kind != tc.kind || m.Link != tc.data.Link {
				t.Errorf("To=%q Kind=%q Link=%q", m.To, m.Kind, m.Link)
			}
			for _, w := range tc.want {
				if !strings.Contains(m.Text, w) {
					t.Errorf("Text lacks %q:\n%s", w, m.Text)
				}
				if !strings.Contains(m.HTML, w) {
					t.Errorf("HTML lacks %q:\n%s", w, m.HTML)
				}
			}
			if tc.data.Link != "" && !strings.Contains(m.HTML, `<a href="`+tc.data.Link+`">`) {
				t.Errorf("HTML has no anchor for the link:\n%s", m.HTML)
			}
			if strings.Contains(m.Text+m.HTML, "<no value>") || strings.Contains(m.Text+m.HTML, "0001") {
				t.Errorf("unfilled value rendered:\n%s\n%s", m.Text, m.HTML)
			}
			if err := m.Validate(); err != nil {
				t.Errorf("rendered message does not validate: %v", err)
			}
		})
	}
}

// Optional pieces vanish cleanly when their Data fields are empty.
func TestDefaultTemplatesMinimalData(t *testing.T) {
	for _, k := range Kinds() {
		m, err := DefaultTemplates().Render(k, Data{To: "a@example.com", Link: "https://x.example/l"})
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"  ", " .", " ,", "Hi ,", "()", " to .", " on ."} {
			if strings.Contains(m.Subject, bad) || strings.Contains(m.Text, bad) {
				t.Errorf("%s: %q in\n%s\n%s", k, bad, m.Subject, m.Text)
			}
		}
		if strings.HasPrefix(m.Subject, ":") || strings.HasPrefix(m.Subject, " ") {
			t.Errorf("%s: Subject %q", k, m.Subject)
		}
		if !strings.HasPrefix(m.Text, "Hi,\n") {
			t.Errorf("%s: greeting %q", k, strings.SplitN(m.Text, "\n", 2)[0])
		}
	}
}

func TestRenderEscapesHTML(t *testing.T) {
	m, err := DefaultTemplates().Render(KindVerifyEmail, Data{
		To:      "a@example.com",
		Name:    `<script>alert("x")</script>`,
		AppName: `Tom & Jerry's <b>`,
		Link:    `https://app.example.com/verify-email/a"><script>`,
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.HTML, "<script>") || strings.Contains(m.HTML, "<b>") {
		t.Errorf("HTML not escaped:\n%s", m.HTML)
	}
	for _, w := range []string{"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", "Tom &amp; Jerry&#39;s &lt;b&gt;", `href="https://app.example.com/verify-email/a%22%3e%3cscript%3e"`} {
		if !strings.Contains(m.HTML, w) {
			t.Errorf("HTML lacks %q:\n%s", w, m.HTML)
		}
	}
	// The plain-text part is plain text: the name as given.
	if !strings.Contains(m.Text, `Hi <script>alert("x")</script>,`) {
		t.Errorf("Text:\n%s", m.Text)
	}
}

func TestRenderNeutralisesBadLinkScheme(t *testing.T) {
	m, err := DefaultTemplates().Render(KindResetPassword, Data{To: "a@example.com", Link: "javascript:alert(1)"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.HTML, `href="javascript:`) || !strings.Contains(m.HTML, `href="#ZgotmplZ"`) {
		t.Errorf("HTML:\n%s", m.HTML)
	}
}

func TestRenderCleansSubject(t *testing.T) {
	tpl := Templates{VerifyEmail: Template{Subject: "Welcome, {{.Name}}!"}}
	for _, tc := range []struct{ name, want string }{
		{"Bob\r\nBcc: eve@evil.example", "Welcome, Bob Bcc: eve@evil.example!"},
		{"Bob\n\n\tX", "Welcome, Bob X!"},
		{"Bob\x00\x7f\u0085X", "Welcome, Bob X!"},
		{"Bob\u2028X", "Welcome, Bob X!"},
		{"Bob\xffX", "Welcome, Bob\uFFFDX!"},
		{"  Bob  ", "Welcome, Bob !"},
	} {
		m, err := tpl.Render(KindVerifyEmail, Data{To: "a@example.com", Name: tc.name, Link: "https://x.example/l"})
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != tc.want {
			t.Errorf("name %q: Subject = %q, want %q", tc.name, m.Subject, tc.want)
		}
		if err := m.Validate(); err != nil {
			t.Errorf("name %q: %v", tc.name, err)
		}
	}
}

func TestRenderTruncatesLongSubject(t *testing.T) {
	tpl := Templates{VerifyEmail: Template{Subject: "{{.Name}}"}}
	m, err := tpl.Render(KindVerifyEmail, Data{To: "a@example.com", Name: strings.Repeat("é", 300)})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Subject) > MaxSubjectLen || !utf8.ValidString(m.Subject) || !strings.HasSuffix(m.Subject, "é…") {
		t.Errorf("Subject (%d bytes) = %q", len(m.Subject), m.Subject)
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}

func TestRenderCustomTemplate(t *testing.T) {
	tpl := DefaultTemplates()
	tpl.ResetPassword.Subject = "{{.AppName}} reset link for {{.To}}"
	tpl.ResetPassword.HTML = "{{/* none */}}\n"
	m, err := tpl.Render(KindResetPassword, Data{To: "a@example.com", AppName: "Acme", Link: "https://x.example/r"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "Acme reset link for a@example.com" {
		t.Errorf("Subject = %q", m.Subject)
	}
	if m.HTML != "" {
		t.Errorf("HTML = %q, want none", m.HTML)
	}
	if !strings.Contains(m.Text, "https://x.example/r") {
		t.Errorf("Text is not the default:\n%s", m.Text)
	}
	// Empty fields fall back to the defaults, so a zero Templates is the
	// default set.
	var zero Templates
	for _, k := range Kinds() {
		d := Data{To: "a@example.com", Name: "N", Link: "https://x.example/r", Time: eventTime}
		a, errA := zero.Render(k, d)
		b, errB := DefaultTemplates().Render(k, d)
		if errA != nil || errB != nil || a != b {
			t.Errorf("%s: zero Templates renders differently", k)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	if _, err := DefaultTemplates().Render("welcome", Data{}); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind: %v", err)
	}
	for _, tc := range []struct {
		tpl  Template
		want string
	}{
		{Template{Subject: "{{.Name"}, "email_changed.Subject"},
		{Template{Text: "{{.Nope}}"}, "email_changed.Text"},
		{Template{HTML: "{{if}}"}, "email_changed.HTML"},
		{Template{HTML: "{{.Time.Nope}}"}, "email_changed.HTML"},
	} {
		tpl := Templates{EmailChanged: tc.tpl}
		_, err := tpl.Render(KindEmailChanged, Data{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Render = %v, want an error naming %s", tc.tpl, err, tc.want)
		}
		if err := tpl.Validate(); err == nil {
			t.Errorf("%+v: Validate = nil", tc.tpl)
		}
	}
	if err := DefaultTemplates().Validate(); err != nil {
		t.Errorf("DefaultTemplates().Validate() = %v", err)
	}
}

func TestExpiryText(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{24 * time.Hour, "24 hours"},
		{time.Hour, "1 hour"},
		{2 * time.Hour, "2 hours"},
		{30 * time.Minute, "30 minutes"},
		{time.Minute, "1 minute"},
		{90 * time.Minute, "1 hour and 30 minutes"},
		{time.Hour + time.Minute + time.Second, "1 hour, 1 minute and 1 second"},
		{45 * time.Second, "45 seconds"},
		{36 * time.Hour, "36 hours"},
		{48 * time.Hour, "2 days"},
		{7 * 24 * time.Hour, "7 days"},
		{49 * time.Hour, "49 hours"},
		{time.Hour + 500*time.Millisecond, "1 hour"},
		{500 * time.Millisecond, ""},
		{0, ""},
		{-time.Hour, ""},
	} {
		if got := (Data{Expiry: tc.d}).ExpiryText(); got != tc.want {
			t.Errorf("ExpiryText(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestTimeText(t *testing.T) {
	if got := (Data{Time: eventTime}).TimeText(); got != "1 March 2025 at 14:05 UTC" {
		t.Errorf("TimeText = %q", got)
	}
	if got := (Data{}).TimeText(); got != "" {
		t.Errorf("zero TimeText = %q", got)
	}
}
