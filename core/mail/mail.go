package mail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind says what a message is. Tests and logs use it; it never reaches the
// recipient. Apps may define kinds of their own.
type Kind string

// The kinds of message the reference flows send.
const (
	// KindVerifyEmail carries a verification link: after registration, on
	// resend, and to the new address after an email change.
	KindVerifyEmail Kind = "verify_email"

	// KindResetPassword carries a password reset link (forgot password).
	KindResetPassword Kind = "reset_password"

	// KindPasswordChanged tells the owner that the password was changed
	// from a signed-in session.
	KindPasswordChanged Kind = "password_changed"

	// KindPasswordResetDone tells the owner that the password was reset
	// with a mailed link.
	KindPasswordResetDone Kind = "password_reset_done"

	// KindTwoFactorDisabled tells the owner that two-factor authentication
	// was turned off.
	KindTwoFactorDisabled Kind = "two_factor_disabled"

	// KindEmailChanged tells the OLD address that the account's email
	// address was changed.
	KindEmailChanged Kind = "email_changed"

	// KindTwoFactorEnabled tells the owner that two-factor authentication
	// was turned on.
	KindTwoFactorEnabled Kind = "two_factor_enabled"

	// KindRecoveryCodesRegenerated tells the owner that new recovery codes
	// replaced the earlier ones.
	KindRecoveryCodesRegenerated Kind = "recovery_codes_regenerated"

	// KindRecoveryCodeUsed tells the owner that a recovery code signed in,
	// and how many are left (Data.CodesLeft).
	KindRecoveryCodeUsed Kind = "recovery_code_used"

	// KindNewSignIn tells the owner of a sign-in from a browser that had
	// not signed in to the account before, with its address and user agent
	// (Data.IP, Data.UserAgent).
	KindNewSignIn Kind = "new_sign_in"

	// KindTwoFactorCodeReused tells the owner that a two-factor code that
	// had signed in already was entered again, from a browser that had not
	// signed in to the account before, and refused (Data.IP,
	// Data.UserAgent): someone who knows the password saw the code.
	KindTwoFactorCodeReused Kind = "two_factor_code_reused"

	// KindPasskeyAdded tells the owner that a passkey was added to the
	// account (Data.PasskeyName, Data.IP).
	KindPasskeyAdded Kind = "passkey_added"

	// KindPasskeyDeleted tells the owner that a passkey was deleted from
	// the account (Data.PasskeyName, Data.IP).
	KindPasskeyDeleted Kind = "passkey_deleted"

	// KindTwoFactorEmailCode carries a one-time code that finishes a
	// sign-in as its second step (Data.Code, Data.Expiry, Data.IP): the
	// fallback factor of auth.Config.EmailCode.
	KindTwoFactorEmailCode Kind = "two_factor_email_code"

	// KindEmailSignIn carries a one-time code and a link that sign in
	// without a password (Data.Code, Data.Link, Data.Expiry, Data.IP):
	// auth.Config.EmailSignIn. To an address without an account it goes
	// only when the app lets such an address sign up this way.
	KindEmailSignIn Kind = "email_sign_in"

	// KindIdentityLinked tells the owner that an account at an outside
	// identity provider was linked to theirs and can now sign in to it
	// (Data.Provider, Data.IP): the social module.
	KindIdentityLinked Kind = "identity_linked"

	// KindIdentityUnlinked tells the owner that a provider's account was
	// unlinked and can no longer sign in (Data.Provider, Data.IP).
	KindIdentityUnlinked Kind = "identity_unlinked"

	// KindAccountDeleted tells the owner that the account and what the
	// app's sign-in held for it were deleted (Data.Time, Data.IP).
	KindAccountDeleted Kind = "account_deleted"

	// KindAPIKeyCreated tells the owner that a personal API key was
	// created for the account (Data.KeyName, Data.Expiry, Data.IP): it acts
	// as the account in the app's API until it expires or is revoked.
	KindAPIKeyCreated Kind = "api_key_created"
)

// Kinds returns every kind the reference flows send, in a fixed order.
func Kinds() []Kind {
	return []Kind{
		KindVerifyEmail, KindResetPassword, KindPasswordChanged,
		KindPasswordResetDone, KindTwoFactorDisabled, KindEmailChanged,
		KindTwoFactorEnabled, KindRecoveryCodesRegenerated, KindRecoveryCodeUsed, KindNewSignIn,
		KindTwoFactorCodeReused, KindPasskeyAdded, KindPasskeyDeleted,
		KindTwoFactorEmailCode, KindEmailSignIn, KindIdentityLinked, KindIdentityUnlinked, KindAccountDeleted,
		KindAPIKeyCreated,
	}
}

// Message is one mail to one recipient.
//
// A Message holds a live link (a bearer credential until it expires), so it
// must never be logged whole. Its [Message.LogValue] method reduces it to
// its kind and the recipient's domain when it is passed to log/slog.
type Message struct {
	// To is the recipient: one bare address such as "ada@example.com"
	// (angle brackets allowed, no display name, at most MaxAddressLen
	// bytes).
	To string

	// Subject is the subject line: valid UTF-8 without control characters
	// (so no CR or LF), not empty, at most MaxSubjectLen bytes. Mailers
	// encode it as RFC 2047 when it is not plain ASCII.
	Subject string

	// Text is the plain-text part: valid UTF-8, not empty.
	Text string

	// HTML is the HTML part, valid UTF-8; empty for a text-only message.
	HTML string

	// Kind says what the message is, for tests and logs.
	Kind Kind

	// Link is the action link in the message, if any, so that tests can
	// follow it. Mailers never send it separately and never log it.
	Link string
}

// Mailer sends messages.
//
// Send delivers m or returns an error; it must honour ctx (cancellation
// and deadline) and be safe for concurrent use. A Mailer rejects a message
// that fails [Message.Validate] before doing any I/O, with an error wrapping
// [ErrInvalidHeader] or [ErrInvalidBody].
type Mailer interface {
	Send(ctx context.Context, m Message) error
}

// Sentinel errors, for errors.Is. Errors from I/O wrap the cause instead:
// the context's error, the network's, or the server's reply as a
// *textproto.Error whose Code is the SMTP reply code.
var (
	// ErrInvalidHeader means a header value was refused: a To, From or
	// Subject that is empty, too long, not valid UTF-8, holds a control
	// character (CR and LF included, which rules out header injection), or
	// an address that net/mail does not parse as exactly one address.
	ErrInvalidHeader = errors.New("mail: invalid header")

	// ErrInvalidBody means the Text part is empty, or a part is not valid
	// UTF-8.
	ErrInvalidBody = errors.New("mail: invalid body")

	// ErrInvalidConfig wraps every error of NewSMTP.
	ErrInvalidConfig = errors.New("mail: invalid config")

	// ErrTLSRequired means an smtp:// server that is not on a loopback
	// address did not offer STARTTLS, so nothing was sent.
	ErrTLSRequired = errors.New("mail: server does not offer STARTTLS")

	// ErrQueueFull means a [Sender]'s queue was full and the message was
	// dropped (and logged).
	ErrQueueFull = errors.New("mail: queue full")

	// ErrClosed means the [Sender] was closed before Send was called.
	ErrClosed = errors.New("mail: sender closed")

	// ErrUnknownKind means [Templates.Render] was asked for a kind it has
	// no template for.
	ErrUnknownKind = errors.New("mail: unknown kind")
)

// Limits on header values.
const (
	// MaxAddressLen is the longest recipient address in bytes (RFC 5321's
	// path limit less the angle brackets).
	MaxAddressLen = 254

	// MaxSubjectLen is the longest subject in bytes. Templates.Render
	// shortens longer subjects; Validate refuses them.
	MaxSubjectLen = 250
)

// Validate reports whether m can be sent: To, Subject and the parts obey
// the rules written on the fields of [Message]. The error wraps
// [ErrInvalidHeader] or [ErrInvalidBody]. Kind and Link are not checked.
func (m Message) Validate() error {
	_, err := m.recipient()
	return err
}

// recipient validates m and returns its parsed recipient.
func (m Message) recipient() (*mail.Address, error) {
	to, err := parseRecipient(m.To)
	if err != nil {
		return nil, err
	}
	if err := checkHeader("Subject", m.Subject, MaxSubjectLen); err != nil {
		return nil, err
	}
	if m.Text == "" {
		return nil, fmt.Errorf("%w: empty text part", ErrInvalidBody)
	}
	if !utf8.ValidString(m.Text) {
		return nil, fmt.Errorf("%w: text part is not valid UTF-8", ErrInvalidBody)
	}
	if !utf8.ValidString(m.HTML) {
		return nil, fmt.Errorf("%w: HTML part is not valid UTF-8", ErrInvalidBody)
	}
	return to, nil
}

// parseRecipient parses a bare recipient address.
func parseRecipient(s string) (*mail.Address, error) {
	if err := checkHeader("To", s, MaxAddressLen); err != nil {
		return nil, err
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, fmt.Errorf("%w: To is not one address", ErrInvalidHeader)
	}
	if a.Name != "" {
		return nil, fmt.Errorf("%w: To must be a bare address, without a display name", ErrInvalidHeader)
	}
	return a, nil
}

// checkHeader refuses empty, overlong, invalid UTF-8 values and values that
// hold control characters. The error names the field, never the value.
func checkHeader(field, v string, maxLen int) error {
	switch {
	case v == "":
		return fmt.Errorf("%w: empty %s", ErrInvalidHeader, field)
	case len(v) > maxLen:
		return fmt.Errorf("%w: %s longer than %d bytes", ErrInvalidHeader, field, maxLen)
	case !utf8.ValidString(v):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidHeader, field)
	case strings.ContainsFunc(v, unicode.IsControl):
		return fmt.Errorf("%w: %s contains a control character", ErrInvalidHeader, field)
	}
	return nil
}

// LogValue implements slog.LogValuer: a Message logs as its kind and the
// recipient's domain only. The link, the body and the full address never
// reach a log through it.
func (m Message) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("kind", string(m.Kind)),
		slog.String("domain", domainOf(m.To)),
	)
}

// domainOf returns the lowercase domain of addr, or "invalid" when addr does
// not parse.
func domainOf(addr string) string {
	a, err := parseRecipient(addr)
	if err != nil {
		return "invalid"
	}
	i := strings.LastIndexByte(a.Address, '@')
	if i < 0 {
		return "invalid"
	}
	return strings.ToLower(a.Address[i+1:])
}

// envelopeAddress is a's addr-spec as it goes into MAIL FROM and RCPT TO,
// with the local part quoted when it needs to be.
func envelopeAddress(a *mail.Address) string {
	s := (&mail.Address{Address: a.Address}).String()
	return strings.TrimSuffix(strings.TrimPrefix(s, "<"), ">")
}
