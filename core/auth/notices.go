package auth

import (
	"context"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// Notices: mails to the account's address when its security changes
// (2FA turned on, recovery codes replaced, a recovery code used), on a
// sign-in from a browser that had not signed in to it before, and when a
// TOTP code that signed in already is entered again from such a browser.
//
// A browser is recognised without a store: every registration and every
// completed sign-in sets the device cookie, a signed token (HMAC-SHA256
// under a key of its own purpose, "device") of the user's id and its issue
// time, for DeviceLifetime. A sign-in whose request carries no such cookie
// for that user (none, another user's, one that does not verify or has
// expired) mails the notice, with the time, the client address and the
// User-Agent, and audits EventNewDeviceSign. The cookie identifies nothing
// but "this browser signed in as this user before"; it authenticates
// nothing, and a stolen copy only spares a thief the notice (SECURITY.md).
//
// An account's first sign-in under authkit is not a new device. When the
// store implements user.SignIns, every registration and every sign-in from
// a browser without the cookie records the account (MarkSignedIn), and the
// sign-in that records it first mails nothing: it audits
// EventNewDeviceSignIn with the detail "first sign-in" and sets the
// cookie. So adding authkit to an app with users does not mail every one of
// them "New sign-in" on their next login, while a user who registered
// under authkit, or signed in once, is mailed for any other browser.
// Without the part (a custom store that lacks it) the first sign-in mails
// as any other. A store error counts as "not the first": the notice goes.
//
// The notices of one account are limited (Limits.NewSignInNotice, default
// one per hour): a client that drops cookies is a new browser at every
// sign-in, and a script signing in 74 times in two minutes mailed 74
// notices. Past the limit a sign-in is audited but not mailed, and the one
// mail of the window says that further sign-ins within it get none of
// their own. The advice follows the account: with 2FA on it is to reset the
// password, end unknown sessions and replace the recovery codes, not to
// turn 2FA on.

// DeviceCookie is the name of the cookie that marks a browser as one that
// signed in to an account before (docs/api.md, Cookies).
const DeviceCookie = "authkit_device"

// DeviceLifetime is how long the device cookie lasts; every sign-in
// renews it, so a browser in use stays known.
const DeviceLifetime = 365 * 24 * time.Hour

// purposeDevice is the token purpose of the device cookie.
const purposeDevice = "device"

// maxUserAgent caps the User-Agent a notice quotes, in characters.
const maxUserAgent = 200

func (s *Service) deviceCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: DeviceCookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: !s.cfg.Insecure, SameSite: http.SameSiteLaxMode,
	}
}

// rememberDevice sets the device cookie for u on the visit.
func (s *Service) rememberDevice(ctx context.Context, v *Visit, u *user.User) {
	if !s.cfg.featureOn(FeatureNewDeviceNotice) {
		return
	}
	tok, err := s.device.Create(u.ID)
	if err != nil {
		s.log.ErrorContext(ctx, "authkit: device cookie not made", "err", err)
		return
	}
	v.setCookie(s.deviceCookie(tok, int(DeviceLifetime/time.Second)))
}

// knownDevice reports whether the visit's request carries a valid device
// cookie of u.
func (s *Service) knownDevice(v *Visit, u *user.User) bool {
	raw, ok := v.req.Cookie(DeviceCookie)
	if !ok || raw == "" {
		return false
	}
	c, err := s.device.Verify(raw)
	return err == nil && c.UserID == u.ID
}

// signedIn follows a completed sign-in (every factor accepted, the session
// issued): from a browser without the device cookie of u it mails the
// new-device notice and audits it; either way it renews the cookie.
func (s *Service) signedIn(ctx context.Context, v *Visit, u *user.User) {
	if !s.cfg.featureOn(FeatureNewDeviceNotice) {
		return
	}
	if !s.knownDevice(v, u) {
		if s.firstSignIn(ctx, u) {
			s.audit(ctx, v, Event{Type: EventNewDeviceSignIn, UserID: u.ID, Detail: firstSignInDetail})
		} else {
			ua := v.userAgent()
			s.audit(ctx, v, Event{Type: EventNewDeviceSignIn, UserID: u.ID, Detail: ua})
			if due, window := s.signInNoticeDue(ctx, v, u); due {
				s.send(ctx, v, mail.KindNewSignIn, u.Email, mail.Data{Name: u.Name, IP: v.clientAddr(), UserAgent: ua,
					TwoFactorEnabled: u.TwoFactorEnabled, Expiry: window})
			}
		}
	}
	s.rememberDevice(ctx, v, u)
}

// signInNoticeDue counts a new-device notice of u against
// Limits.NewSignInNotice and reports whether it is to be mailed, with the
// limit's window (0 when the limit is off), which the mail names. A store
// failure or a full store mails it: a notice too many is better than a
// sign-in unannounced.
func (s *Service) signInNoticeDue(ctx context.Context, v *Visit, u *user.User) (bool, time.Duration) {
	lm := s.lim.newSignIn
	if lm == nil {
		return true, 0
	}
	window := s.cfg.Limits.NewSignInNotice.Window
	res, err := lm.l.Attempt(ctx, lm.key(u.ID))
	if err != nil {
		s.log.WarnContext(ctx, "authkit: new-sign-in limit store failed; mailing the notice", "err", err)
		return true, window
	}
	if res.StoreFull {
		s.storeFull(ctx, v, lm)
	}
	return res.Allowed, window
}

// firstSignInDetail is the Detail of the EventNewDeviceSignIn of an
// account's first sign-in under authkit, which mails nothing.
const firstSignInDetail = "first sign-in"

// firstSignIn records that u signed in (or registered) under authkit and
// reports whether it is the first time: false without user.SignIns, and
// false (with the error logged) when the store fails, so that a failure
// mails the notice rather than hides it.
func (s *Service) firstSignIn(ctx context.Context, u *user.User) bool {
	if s.users.signIns == nil {
		return false
	}
	first, err := s.users.signIns.MarkSignedIn(ctx, u.ID, s.now())
	if err != nil {
		s.log.ErrorContext(ctx, "authkit: first sign-in not recorded", "err", err)
		return false
	}
	return first
}

// codeReused follows a TOTP code refused at the 2FA step of a login
// because it had signed in already (ASVS 2.8.5): the code was seen by
// someone who also knows the password, unless the owner pressed twice. A
// browser that holds the account's device cookie is taken for the owner's
// (a double submit mails nothing); from any other browser the owner is
// mailed, with the time, the address and the User-Agent. With
// FeatureNewDeviceNotice off no browser holds the cookie, so every reuse
// mails. The per-user 2FA limit bounds how many a password holder can
// cause.
func (s *Service) codeReused(ctx context.Context, v *Visit, u *user.User) {
	if s.knownDevice(v, u) {
		return
	}
	ua := v.userAgent()
	s.send(ctx, v, mail.KindTwoFactorCodeReused, u.Email, mail.Data{Name: u.Name, IP: v.clientAddr(), UserAgent: ua})
}

// cleanUserAgent makes a client's User-Agent fit to quote in a mail: valid
// UTF-8, control characters dropped, white space collapsed, at most
// maxUserAgent characters.
func cleanUserAgent(ua string) string {
	ua = strings.ToValidUTF8(ua, "")
	ua = strings.Join(strings.FieldsFunc(ua, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if utf8.RuneCountInString(ua) > maxUserAgent {
		ua = string([]rune(ua)[:maxUserAgent]) + "…"
	}
	return ua
}
