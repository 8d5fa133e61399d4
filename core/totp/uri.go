package totp

import (
	"strconv"
	"strings"
)

// QRURI returns the otpauth URI (Google's Key URI Format) that enrolls secret
// in an authenticator app, usually shown as a QR code:
//
//	otpauth://totp/ISSUER:ACCOUNT?secret=SECRET&issuer=ISSUER&algorithm=SHA1&digits=6&period=30
//
// The issuer appears both in the label and as the issuer parameter. With an
// empty issuer the label is just the account and there is no issuer
// parameter.
//
// Issuer and account are percent-encoded as UTF-8, byte by byte: only
// letters, digits, '-', '.', '_', '~' and, in the label, '@' stay literal
// (so "alice@example.com" reads as it is; '@' is %40 in the issuer
// parameter). A space is %20, never '+' (Google
// Authenticator would show a literal '+'), '+' is %2B, '&' is %26, and ':' is
// %3A so the colon that separates issuer and account stays unambiguous.
//
// The Key URI Format forbids colons in the issuer and account: apps that
// decode the label before splitting it at the first colon (pquerna/otp's
// Key.AccountName among them) misread an issuer or account holding one, so
// callers should avoid them.
//
// The secret is written uppercase without '=' padding, as the format
// recommends. QRURI does not validate it: Match and Code do.
func (t *TOTP) QRURI(secret, issuer, account string) string {
	var b strings.Builder
	b.Grow(64 + len(secret) + 6*(len(issuer)+len(account)))
	b.WriteString("otpauth://totp/")
	if issuer != "" {
		escape(&b, issuer, true)
		b.WriteByte(':')
	}
	escape(&b, account, true)
	b.WriteString("?secret=")
	escape(&b, strings.ToUpper(strings.TrimRight(secret, "=")), false)
	if issuer != "" {
		b.WriteString("&issuer=")
		escape(&b, issuer, false)
	}
	b.WriteString("&algorithm=SHA1&digits=")
	b.WriteString(strconv.Itoa(t.digits.Length()))
	b.WriteString("&period=")
	b.WriteString(strconv.FormatInt(t.period, 10))
	return b.String()
}

// escape writes s to b percent-encoded: every byte except the RFC 3986
// unreserved characters (and '@' when keepAt) becomes %XX, uppercase hex.
func escape(b *strings.Builder, s string, keepAt bool) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '@' && keepAt:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0x0f])
		}
	}
}
