package auth

import (
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// DefaultTwoFactorGrace is TwoFactorPolicy.Grace's default: a week to
// set 2FA up.
const DefaultTwoFactorGrace = 7 * 24 * time.Hour

// TwoFactorPolicy is Config.RequireTwoFactor: 2FA made compulsory, for
// every account or for those For picks (administrators, a paid plan).
//
// An account the policy covers and that has no 2FA has a grace period
// (Grace, from its creation or from Since, whichever is later). During it
// the account signs in and uses the app as before, and is sent to set 2FA
// up: [Service.TwoFactorRequirement] says so to the app, the pages module
// lands the user on its security page after every sign-in. Once it is
// over, RequireUser and RequireVerifiedEmail on every framework
// ([Service.Authenticate]) refuse the account's requests with 403
// {"error": "Set up two-factor authentication to continue", "code":
// "two_factor_required"} and the pages send every signed-in page to the
// security page; authkit's own account routes (me, 2FA setup and confirm,
// confirm-password, logout) stay open, so the user can comply. "2FA" is
// TOTP (TwoFactorEnabled): a passkey alone does not satisfy the policy,
// since the password then still signs in by itself.
type TwoFactorPolicy struct {
	// Enabled turns the policy on.
	Enabled bool

	// For picks the accounts the policy covers; nil covers every account.
	// It runs on every authenticated request of an account without 2FA:
	// keep it to the record's fields (it gets a copy).
	For func(u *user.User) bool

	// Grace is how long an account may go without 2FA. Default
	// (0): DefaultTwoFactorGrace; negative: none, 2FA is required from the
	// first sign-in on.
	Grace time.Duration

	// Since is when the app turned the policy on: an account created
	// before it has its grace from Since instead of from its creation (so
	// that turning the policy on does not lock out every older account at
	// once), and so has an account whose store keeps no creation time.
	// Default: zero, the grace runs from each account's creation.
	Since time.Time
}

// TwoFactorRequirement is what Config.RequireTwoFactor says of one
// account ([Service.TwoFactorRequirement]).
type TwoFactorRequirement struct {
	// Required: the policy covers the account and it has no 2FA; the app
	// should send the user to set it up.
	Required bool
	// Deadline is the end of the grace period (when Required).
	Deadline time.Time
	// Overdue: Required and the grace period is over; RequireUser refuses
	// the account with ErrTwoFactorRequired.
	Overdue bool
}

// TwoFactorRequirement returns what Config.RequireTwoFactor says of u now:
// nothing required without the policy, for an account it does not cover
// and for one with 2FA on.
func (s *Service) TwoFactorRequirement(u *user.User) TwoFactorRequirement {
	p := s.cfg.RequireTwoFactor
	if !p.Enabled || u == nil || u.TwoFactorEnabled {
		return TwoFactorRequirement{}
	}
	if p.For != nil && !p.For(u.Clone()) {
		return TwoFactorRequirement{}
	}
	grace := p.Grace
	switch {
	case grace == 0:
		grace = DefaultTwoFactorGrace
	case grace < 0:
		grace = 0
	}
	from := u.CreatedAt
	if p.Since.After(from) {
		from = p.Since
	}
	deadline := from.Add(grace)
	return TwoFactorRequirement{Required: true, Deadline: deadline, Overdue: !s.now().Before(deadline)}
}
