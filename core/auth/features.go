package auth

import (
	"fmt"
	"slices"

	"github.com/authkit-go/authkit/core/i18n"
	"github.com/authkit-go/authkit/core/mail"
)

// Feature is a part of authkit an app can switch off with Config.Disable,
// for what it does not offer: an invitation-only app has no public
// registration, an app whose addresses come from a directory no email
// change. A switched-off feature's routes are not registered (they answer
// 404 like any unknown path) and its typed methods fail with
// [ErrFeatureDisabled].
type Feature string

// The features that can be switched off. Signing in and out and the
// current user are always on.
const (
	// FeatureRegistration is public sign-up: POST /api/auth/register,
	// Service.Register. An app that creates accounts itself (an admin, an
	// invitation) switches it off.
	FeatureRegistration Feature = "registration"

	// FeatureTwoFactor is turning 2FA on: /api/2fa/setup, /api/2fa/confirm
	// and /api/2fa/regenerate-codes. The second step of a login
	// (verify, recover) and /api/2fa/disable stay, so that an account that
	// has 2FA still signs in with it and can turn it off: switching the
	// feature off never drops a factor a user chose.
	FeatureTwoFactor Feature = "two-factor"

	// FeatureEmailChange is POST /api/auth/change-email, Service.ChangeEmail.
	FeatureEmailChange Feature = "email-change"

	// FeaturePasswordReset is the reset by mailed link:
	// /api/auth/forgot-password and /api/auth/reset-password/{token}.
	FeaturePasswordReset Feature = "password-reset"

	// FeaturePasswordChange is POST /api/auth/change-password,
	// Service.ChangePassword.
	FeaturePasswordChange Feature = "password-change"

	// FeatureNewDeviceNotice is the mail on a sign-in from a browser that
	// had not signed in to the account before, and the device cookie that
	// recognises one (notices.go). It has no route; switched off, no
	// device cookie is set and no such mail sent. The other notices (2FA
	// on and off, recovery codes, password and email changes) are always
	// sent.
	FeatureNewDeviceNotice Feature = "new-device-notice"

	// FeatureEmailVerification is authkit's verification of addresses:
	// the link mailed on registration and on an email change,
	// Service.VerifyEmail and Service.ResendVerification (GET
	// /api/auth/verify-email/{token}, POST /api/auth/resend-verification).
	// An app that verifies addresses itself (a directory, an invitation
	// mailed by the app) switches it off and sets User.EmailVerifiedAt in
	// its store, which RequireVerifiedEmail still reads; the store then
	// needs no user.EmailVerification. Off, the two routes stay listed
	// and answer 404 (feature_disabled) through their methods.
	FeatureEmailVerification Feature = "email-verification"

	// FeatureLogoutEverywhere is Service.LogoutEverywhere (POST
	// /api/auth/logout-all, which stays listed and answers 404 when off).
	// Off, the store needs no user.SessionVersions; password changes and
	// resets, email changes and 2FA disable still end the other sessions
	// through their own parts.
	FeatureLogoutEverywhere Feature = "logout-everywhere"
)

// features is every Feature, for checking Config.Disable.
var features = []Feature{FeatureRegistration, FeatureTwoFactor, FeatureEmailChange, FeaturePasswordReset, FeaturePasswordChange,
	FeatureNewDeviceNotice, FeatureEmailVerification, FeatureLogoutEverywhere}

// checkFeatures refuses an unknown feature name.
func checkFeatures(disable []Feature) error {
	for _, f := range disable {
		if !slices.Contains(features, f) {
			return fmt.Errorf("auth: Config.Disable: unknown feature %q (known: %q)", f, features)
		}
	}
	return nil
}

// Enabled reports whether feature f is on.
func (s *Service) Enabled(f Feature) bool { return s.enabled(f) == nil }

// enabled returns ErrFeatureDisabled when f is switched off. The empty
// feature, of the always-on routes, is always on.
func (s *Service) enabled(f Feature) error {
	if !s.cfg.featureOn(f) {
		return ErrFeatureDisabled
	}
	return nil
}

// featureOn reports whether f is on in this configuration.
func (cfg *Config) featureOn(f Feature) bool {
	return f == "" || !slices.Contains(cfg.Disable, f)
}

// checkCatalog renders every mail of every language of c, so that a
// template that does not parse or execute stops New, not the first mail.
func checkCatalog(c *i18n.Catalog) error {
	for _, l := range c.Languages() {
		for kind, m := range l.Mails {
			t, err := mail.DefaultTemplates().With(mail.Kind(kind), mail.Template{Subject: m.Subject, Text: m.Text, HTML: m.HTML})
			if err == nil {
				err = t.Validate()
			}
			if err != nil {
				return fmt.Errorf("auth: Config.Catalog: %s: %w", l.Tag(), err)
			}
		}
	}
	return nil
}
