package auth

import (
	"context"
	"log/slog"
	"strconv"
	"time"
)

// EventType names a security event.
type EventType string

// The security events a Service reports to Config.Audit.
const (
	EventRegistered               EventType = "registered"
	EventLoginSucceeded           EventType = "login_succeeded"
	EventLoginPending             EventType = "login_pending_2fa"
	EventLoginFailed              EventType = "login_failed"
	EventAccountLocked            EventType = "account_locked"
	EventTwoFactorFailed          EventType = "2fa_failed"
	EventTwoFactorEnabled         EventType = "2fa_enabled"
	EventTwoFactorDisabled        EventType = "2fa_disabled"
	EventRecoveryCodeUsed         EventType = "recovery_code_used"
	EventRecoveryCodesRegenerated EventType = "recovery_codes_regenerated"
	EventPasswordCheckFailed      EventType = "password_check_failed"
	EventPasswordResetRequested   EventType = "password_reset_requested"
	EventPasswordReset            EventType = "password_reset"
	EventPasswordChanged          EventType = "password_changed"
	EventEmailVerified            EventType = "email_verified"
	EventEmailChanged             EventType = "email_changed"
	EventLoggedOutEverywhere      EventType = "logged_out_everywhere"
	EventSessionEnded             EventType = "session_ended"
	EventDeviceTrusted            EventType = "device_trusted"
	EventDeviceForgotten          EventType = "trusted_device_forgotten"
	EventRateLimited              EventType = "rate_limited"

	// EventPasswordConfirmed: the signed-in user confirmed the current
	// password (POST /api/auth/confirm-password); the session counts as
	// recently authenticated from now (Config.ReauthWindow).
	EventPasswordConfirmed EventType = "password_confirmed"

	// EventReauthenticated: the signed-in user re-authenticated by another
	// way than the password (Detail: the LoginMethod, "passkey"); the
	// session counts as recently authenticated from now.
	EventReauthenticated EventType = "reauthenticated"

	// EventNewDeviceSignIn: a sign-in from a browser without the account's
	// device cookie; the new-device notice was mailed (Detail: the
	// User-Agent, shortened).
	EventNewDeviceSignIn EventType = "new_device_sign_in"

	// EventLimitStoreFull: a limit's in-memory store was full when a new
	// key came (Detail: the limit's name, e.g. "login:email"). Reported at
	// most once per limit per minute, however many keys it refuses, so an
	// attacker who keeps a store full cannot flood the log. For a client
	// address or user id limit, new keys are limited meanwhile; for an
	// email limit they are let through uncounted. See the package docs.
	EventLimitStoreFull EventType = "limit_store_full"
)

// Event is one security event. It never carries a password, a code, a
// token or a secret.
type Event struct {
	Type   EventType
	Time   time.Time
	UserID string // empty when no account is known
	Email  string // the address tried, for failures without an account
	IP     string // the client address as rate limits key it
	Detail string // e.g. the limit's name, or why a login failed

	// Factor is the second factor an event is about, set on the events of
	// the second step of a login (EventTwoFactorFailed, and the
	// EventLoginSucceeded or EventRecoveryCodeUsed that ends it): "totp",
	// "recovery_code", "passkey", "email_code". Empty otherwise.
	Factor LoginMethod
}

func (s *Service) audit(ctx context.Context, v *Visit, e Event) {
	e.Time = s.now()
	e.IP = v.ClientIP()
	if s.cfg.Observer != nil {
		s.cfg.Observer.Event(ctx, e)
	}
	if s.cfg.Audit != nil {
		s.cfg.Audit(ctx, e)
		return
	}
	s.log.Log(ctx, eventLevel(e.Type), "authkit: "+string(e.Type), auditAttrs(e)...)
}

// eventLevel is the level an event is logged at: WARN for the events that
// suggest an attack or a compromised credential (a passkey whose counter
// went backwards may be a cloned authenticator), INFO for the others.
func eventLevel(t EventType) slog.Level {
	switch t {
	case EventLoginFailed, EventAccountLocked, EventTwoFactorFailed, EventPasswordCheckFailed, EventRateLimited,
		EventLimitStoreFull, EventPasskeyCountRegressed:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

func auditAttrs(e Event) []any {
	attrs := []any{"event", string(e.Type)}
	for _, kv := range [][2]string{{"user", e.UserID}, {"email", e.Email}, {"ip", e.IP}, {"detail", e.Detail}} {
		if kv[1] != "" {
			attrs = append(attrs, kv[0], kv[1])
		}
	}
	return attrs
}

// LogAudit is an Audit function that logs events with l, the default's
// behaviour (the same levels), for apps that wrap it.
func LogAudit(l *slog.Logger) func(context.Context, Event) {
	return func(ctx context.Context, e Event) {
		l.Log(ctx, eventLevel(e.Type), "authkit: "+string(e.Type), auditAttrs(e)...)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
