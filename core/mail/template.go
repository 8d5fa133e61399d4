package mail

import (
	"fmt"
	htmltemplate "html/template"
	"strconv"
	"strings"
	texttemplate "text/template"
	"time"
	"unicode"
	"unicode/utf8"
)

// Template is the source of one kind of message: Go templates executed with
// a [Data]. Subject and Text are text/template; HTML is html/template, so
// every value (a display name such as "<b>Bob</b>", a link) is escaped for
// its place in the HTML, and a link that is not http(s) or mailto becomes
// "#ZgotmplZ".
type Template struct {
	Subject string
	Text    string
	HTML    string
}

// Templates holds one [Template] per kind. An empty field means the default
// of that field (see [DefaultTemplates]), so an app replaces only what it
// wants to change:
//
//	t := mail.Templates{ResetPassword: mail.Template{Subject: "Your {{.AppName}} reset link"}}
//
// To send a kind without an HTML part, give it an HTML template that
// renders to nothing but white space, such as "{{/* none */}}".
type Templates struct {
	VerifyEmail       Template
	ResetPassword     Template
	PasswordChanged   Template
	PasswordResetDone Template
	TwoFactorDisabled Template
	EmailChanged      Template

	TwoFactorEnabled         Template
	RecoveryCodesRegenerated Template
	RecoveryCodeUsed         Template
	NewSignIn                Template
	TwoFactorCodeReused      Template
	PasskeyAdded             Template
	PasskeyDeleted           Template
	TwoFactorEmailCode       Template
	EmailSignIn              Template
	IdentityLinked           Template
	IdentityUnlinked         Template
	AccountDeleted           Template
	APIKeyCreated            Template
}

// Data is what a template sees.
type Data struct {
	// To is the recipient; it becomes Message.To.
	To string

	// Name is the recipient's display name; empty for none.
	Name string

	// Link is the action link (verification, reset), or for notices an
	// optional link to act on ("reset your password at ..."). It becomes
	// Message.Link.
	Link string

	// AppName names the app; empty for none.
	AppName string

	// Expiry is the link's lifetime; templates print it with
	// [Data.ExpiryText]. Zero means the spec's lifetime for the kind: 24
	// hours for KindVerifyEmail, 1 hour for KindResetPassword. For
	// KindNewSignIn it is the window in which no further new-sign-in
	// notice is mailed (auth.Limits.NewSignInNotice); zero for none.
	Expiry time.Duration

	// TwoFactorEnabled says the account has 2FA on, for KindNewSignIn:
	// its advice is then not to turn 2FA on.
	TwoFactorEnabled bool

	// NewEmail is the account's new address, for KindEmailChanged (which
	// goes to the old one).
	NewEmail string

	// Time is when the event happened, for the notices; templates print it
	// with [Data.TimeText]. Zero for none.
	Time time.Time

	// IP and UserAgent are the client address and the browser's
	// User-Agent of a sign-in, for KindNewSignIn, KindRecoveryCodeUsed and
	// KindTwoFactorCodeReused;
	// empty for none. The User-Agent is the client's own text: the HTML
	// part escapes it, and authkit strips control characters and shortens
	// it first.
	IP        string
	UserAgent string

	// CodesLeft is how many recovery codes the account has left, for
	// KindRecoveryCodeUsed.
	CodesLeft int

	// PasskeyName is the name of the passkey added or deleted, for
	// KindPasskeyAdded and KindPasskeyDeleted; the user's own text, which
	// the HTML part escapes.
	PasskeyName string

	// KeyName is the name the user gave a personal API key, for
	// KindAPIKeyCreated; the user's own text, which the HTML part escapes.
	KeyName string

	// Provider is the name of the identity provider whose account was
	// linked or unlinked, for KindIdentityLinked and KindIdentityUnlinked
	// ("Google", or the app's name for its own provider).
	Provider string

	// Code is the one-time code of KindTwoFactorEmailCode and
	// KindEmailSignIn. It is a secret
	// until used: Message.LogValue never logs the body it is in.
	Code string

	// Words, when set, words Expiry and Time in the mail's language for
	// ExpiryText and TimeText (core/i18n's Language does). Nil: English.
	Words Wording
}

// Wording words durations and times in a language, for templates in that
// language.
type Wording interface {
	// Duration words d ("24 Stunden"); "" to fall back to English.
	Duration(d time.Duration) string
	// Time words t ("14. März 2031 um 15:09 UTC"); "" to fall back to
	// English.
	Time(t time.Time) string
}

// Spec lifetimes that Render assumes when Data.Expiry is zero.
const (
	verifyEmailExpiry   = 24 * time.Hour
	resetPasswordExpiry = time.Hour
	emailCodeExpiry     = 10 * time.Minute // auth's default
)

// ExpiryText returns Expiry in words: "24 hours", "1 hour", "30 minutes",
// "1 hour and 30 minutes", "2 days" (whole days from 48 hours on). It
// returns "" when Expiry is below one second.
func (d Data) ExpiryText() string {
	e := d.Expiry.Truncate(time.Second)
	if e <= 0 {
		return ""
	}
	if d.Words != nil {
		if w := d.Words.Duration(e); w != "" {
			return w
		}
	}
	if e >= 48*time.Hour && e%(24*time.Hour) == 0 {
		return plural(int64(e/(24*time.Hour)), "day")
	}
	var parts []string
	h, m, s := int64(e/time.Hour), int64(e%time.Hour/time.Minute), int64(e%time.Minute/time.Second)
	if h > 0 {
		parts = append(parts, plural(h, "hour"))
	}
	if m > 0 {
		parts = append(parts, plural(m, "minute"))
	}
	if s > 0 {
		parts = append(parts, plural(s, "second"))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s"
}

// TimeText returns Time as "2 January 2006 at 15:04 MST" in Time's own
// location (flows pass UTC), or "" when Time is zero.
func (d Data) TimeText() string {
	if d.Time.IsZero() {
		return ""
	}
	if d.Words != nil {
		if w := d.Words.Time(d.Time); w != "" {
			return w
		}
	}
	return d.Time.Format("2 January 2006 at 15:04 MST")
}

// Render executes the template for kind with data and returns the message,
// with To and Link taken from data. The subject is made safe for a header
// line whatever data holds: invalid UTF-8 becomes U+FFFD, every run of
// control characters and white space (CR and LF included) becomes one
// space, and a subject longer than MaxSubjectLen bytes is cut at a
// character boundary and ends with "…". The parts get invalid UTF-8
// replaced the same way. A part that renders to only white space is left
// empty. Render does not validate To; the Mailer does.
//
// Errors: [ErrUnknownKind], or a template that does not parse or execute
// (wrapped, naming the kind and field).
func (t Templates) Render(kind Kind, data Data) (Message, error) {
	tpl, ok := t.lookup(kind)
	if !ok {
		return Message{}, fmt.Errorf("%w: %q", ErrUnknownKind, kind)
	}
	if data.Expiry == 0 {
		switch kind {
		case KindVerifyEmail:
			data.Expiry = verifyEmailExpiry
		case KindResetPassword:
			data.Expiry = resetPasswordExpiry
		case KindTwoFactorEmailCode, KindEmailSignIn:
			data.Expiry = emailCodeExpiry
		}
	}
	subject, err := execText(kind, "Subject", tpl.Subject, data)
	if err != nil {
		return Message{}, err
	}
	text, err := execText(kind, "Text", tpl.Text, data)
	if err != nil {
		return Message{}, err
	}
	html, err := execHTML(kind, tpl.HTML, data)
	if err != nil {
		return Message{}, err
	}
	return Message{
		To:      data.To,
		Subject: cleanSubject(subject),
		Text:    cleanPart(text),
		HTML:    cleanPart(html),
		Kind:    kind,
		Link:    data.Link,
	}, nil
}

// Validate parses every template and renders every kind with sample data,
// so that an app can check its templates at startup rather than at the
// first mail.
func (t Templates) Validate() error {
	sample := Data{
		To: "user@example.com", Name: "Sample User", Link: "https://example.com/link/token",
		AppName: "Sample App", Expiry: time.Hour, NewEmail: "new@example.com",
		Time: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), IP: "203.0.113.9",
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0", CodesLeft: 7,
		Code: "123456", Provider: "Google", KeyName: "deploy script",
	}
	for _, k := range Kinds() {
		if _, err := t.Render(k, sample); err != nil {
			return err
		}
	}
	return nil
}

// With returns t with kind's template replaced by tpl, for a mail in
// another language; ErrUnknownKind for a kind that is not one of mail's.
func (t Templates) With(kind Kind, tpl Template) (Templates, error) {
	p := t.of(kind)
	if p == nil {
		return t, fmt.Errorf("%w: %q", ErrUnknownKind, kind)
	}
	*p = tpl
	return t, nil
}

// of returns the field of t that holds kind's template; nil for a kind that
// is not one of mail's.
func (t *Templates) of(kind Kind) *Template {
	switch kind {
	case KindVerifyEmail:
		return &t.VerifyEmail
	case KindResetPassword:
		return &t.ResetPassword
	case KindPasswordChanged:
		return &t.PasswordChanged
	case KindPasswordResetDone:
		return &t.PasswordResetDone
	case KindTwoFactorDisabled:
		return &t.TwoFactorDisabled
	case KindEmailChanged:
		return &t.EmailChanged
	case KindTwoFactorEnabled:
		return &t.TwoFactorEnabled
	case KindRecoveryCodesRegenerated:
		return &t.RecoveryCodesRegenerated
	case KindRecoveryCodeUsed:
		return &t.RecoveryCodeUsed
	case KindNewSignIn:
		return &t.NewSignIn
	case KindTwoFactorCodeReused:
		return &t.TwoFactorCodeReused
	case KindPasskeyAdded:
		return &t.PasskeyAdded
	case KindPasskeyDeleted:
		return &t.PasskeyDeleted
	case KindTwoFactorEmailCode:
		return &t.TwoFactorEmailCode
	case KindEmailSignIn:
		return &t.EmailSignIn
	case KindIdentityLinked:
		return &t.IdentityLinked
	case KindIdentityUnlinked:
		return &t.IdentityUnlinked
	case KindAccountDeleted:
		return &t.AccountDeleted
	case KindAPIKeyCreated:
		return &t.APIKeyCreated
	}
	return nil
}

// lookup returns kind's template with empty fields filled from the default.
func (t Templates) lookup(kind Kind) (Template, bool) {
	p := t.of(kind)
	if p == nil {
		return Template{}, false
	}
	defaults := DefaultTemplates()
	tpl, def := *p, *defaults.of(kind)
	if tpl.Subject == "" {
		tpl.Subject = def.Subject
	}
	if tpl.Text == "" {
		tpl.Text = def.Text
	}
	if tpl.HTML == "" {
		tpl.HTML = def.HTML
	}
	return tpl, true
}

func execText(kind Kind, field, src string, data Data) (string, error) {
	tp, err := texttemplate.New(string(kind) + "." + field).Parse(src)
	if err != nil {
		return "", fmt.Errorf("mail: template %s.%s: %w", kind, field, err)
	}
	var b strings.Builder
	if err := tp.Execute(&b, data); err != nil {
		return "", fmt.Errorf("mail: template %s.%s: %w", kind, field, err)
	}
	return b.String(), nil
}

func execHTML(kind Kind, src string, data Data) (string, error) {
	tp, err := htmltemplate.New(string(kind) + ".HTML").Parse(src)
	if err != nil {
		return "", fmt.Errorf("mail: template %s.HTML: %w", kind, err)
	}
	var b strings.Builder
	if err := tp.Execute(&b, data); err != nil {
		return "", fmt.Errorf("mail: template %s.HTML: %w", kind, err)
	}
	return b.String(), nil
}

// cleanSubject makes s one safe header line; see Render.
func cleanSubject(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	if len(s) <= MaxSubjectLen {
		return s
	}
	const ellipsis = "…"
	cut := MaxSubjectLen - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + ellipsis
}

// cleanPart replaces invalid UTF-8 and empties a part that is all white
// space.
func cleanPart(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
