package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// Account deletion and export: a signed-in user deletes their own account
// (POST /api/auth/delete-account) or downloads what authkit holds about it
// (GET /api/auth/export). Both need a recent authentication; deletion on a
// 2FA account also its second factor.
//
// Deletion is one path for the user's own request, the support operation
// (Support.DeleteAccount, `authkit user delete`) and a module's undo
// (Modules.DeleteAccount): eraseAccount. It deletes the user
// (Registration.Delete: the row, passkeys, passkey handle, identities),
// running Hooks.BeforeDeleteAccount first, in the same transaction when
// the store is a user.AccountDeleter; then, once the deletion is
// committed, what the user owns outside the user store (ownedParts: the
// email code, session records, trusted devices) and the limits keyed by
// the user. A committed deletion is always audited and mailed, whatever
// fails after it.

// EventAccountDeleted: the user deleted their own account
// (Service.DeleteAccount). Support's deletion is EventSupportAccountDeleted.
const EventAccountDeleted EventType = "account_deleted"

// DeleteAccountInput is what DeleteAccount takes.
type DeleteAccountInput struct {
	// Password, when given, is the re-authentication (checked and limited
	// as confirm-password's); without it the session must have
	// authenticated within Config.ReauthWindow.
	Password string
	// Code is the second factor of an account with 2FA on: a TOTP code or
	// an unused recovery code, required and checked as confirm-password
	// does (the 2FA limit applies). Ignored without 2FA.
	Code string
}

// DeleteAccount is POST /api/auth/delete-account: the signed-in user
// deletes their account and everything authkit holds about it (see
// [DeletedAccount]). It needs a recent authentication (or in.Password) and,
// on an account with 2FA on, in.Code: without it [ErrTwoFactorCodeRequired],
// a wrong one [ErrInvalidTwoFactorCode], counted against Limits.TwoFactor.
//
// Config.Hooks.BeforeDeleteAccount runs before the user is deleted, in the
// store's transaction when the store offers one (user.AccountDeleter); an
// *Error it returns is the answer and nothing is deleted; any other error
// answers [ErrAccountDeletionBlocked] (logged). Rows of the app that still
// point at the user (a foreign key) answer ErrAccountDeletionBlocked too,
// never a database error.
//
// Once the deletion is committed it is audited (EventAccountDeleted), the
// notice mailed (mail.KindAccountDeleted) and the visit's cookies expired.
// Of racing deletions of one account one succeeds; the others find no
// user and answer [ErrNotAuthenticated].
func (s *Service) DeleteAccount(ctx context.Context, v *Visit, in DeleteAccountInput) (err error) {
	ctx, flow := s.enter(ctx, v, "delete-account")
	defer flow.end(&err)
	if err := checkText(text{"password", in.Password}, text{"code", in.Code}); err != nil {
		return err
	}
	if s.users.registration == nil {
		return ErrFeatureDisabled
	}
	u, err := s.CurrentUser(ctx, v)
	if err != nil {
		return err
	}
	if in.Password == "" && !s.recent(v) {
		return ErrReauthenticationRequired
	}
	if u.TwoFactorEnabled && in.Code == "" {
		return ErrTwoFactorCodeRequired
	}
	if in.Password != "" {
		if err := s.checkPassword(ctx, v, u, in.Password); err != nil {
			return err
		}
	}
	if u.TwoFactorEnabled {
		if err := s.checkSecondFactor(ctx, v, u, in.Code); err != nil {
			return err
		}
	}
	if _, err := s.eraseAccount(ctx, v, u, EventAccountDeleted, ""); err != nil {
		return err
	}
	_ = v.sess.Logout(ctx) // its record is gone with the others
	s.clearPending(v)
	return nil
}

// eraseAccount deletes u and everything authkit holds for it, audits the
// deletion as event (with detail) and mails the notice; it is the one
// path of every deletion. The returned error is nil once the user is
// deleted: what fails after the commit is logged (and reported in the
// result), never an error that would hide the deletion.
func (s *Service) eraseAccount(ctx context.Context, v *Visit, u *user.User, event EventType, detail string) (DeletedAccount, error) {
	r, err := eraseUser(ctx, s.cfg.Users, s.cfg.Hooks.BeforeDeleteAccount, u, s.runHook)
	if err != nil {
		var ae *Error
		switch {
		case errors.Is(err, user.ErrNotFound):
			return r, ErrNotAuthenticated // a racing deletion won
		case errors.As(err, &ae):
			return r, ae
		case errors.Is(err, user.ErrReferenced), errors.Is(err, errHookFailed):
			s.log.WarnContext(ctx, "authkit: delete account: blocked", "user", u.ID, "err", err)
			return r, ErrAccountDeletionBlocked
		}
		return r, fmt.Errorf("delete account: %w", err)
	}
	// Committed: from here on, report, never fail.
	ctx = context.WithoutCancel(ctx)
	s.audit(ctx, v, Event{Type: event, UserID: u.ID, Detail: detail})
	s.send(ctx, v, mail.KindAccountDeleted, u.Email, mail.Data{Name: u.Name, IP: v.ClientIP()})
	r.EmailCodes, r.Sessions, r.Trusted = eraseOwned(ctx, s.cfg.Users, s.cfg.Sessions, s.cfg.TrustedDevices, u.ID, func(what string, err error) {
		s.log.WarnContext(ctx, "authkit: delete account: "+what+" not deleted", "user", u.ID, "err", err)
	})
	for _, lm := range []*limiter{s.lim.password, s.lim.twoFactor, s.lim.resend, s.lim.emailCode} {
		s.resetLimit(ctx, v, lm, u.ID)
	}
	return r, nil
}

// errHookFailed marks a BeforeDeleteAccount that failed with an error that
// is not an *Error.
var errHookFailed = errors.New("before-delete hook failed")

// eraseUser deletes u from users, with the app's hook before it: in the
// store's transaction when users is a user.AccountDeleter, else first. It
// counts the passkeys that go with the user.
func eraseUser(ctx context.Context, users user.Accounts, hook func(context.Context, *user.User) error, u *user.User,
	run func(ctx context.Context, name string, call func() error) error) (DeletedAccount, error) {
	r := DeletedAccount{Passkeys: -1, Sessions: -1, Trusted: -1}
	reg, ok := users.(user.Registration)
	if !ok {
		return r, ErrFeatureDisabled
	}
	if pk, ok := users.(user.Passkeys); ok {
		keys, err := pk.ListPasskeys(ctx, u.ID)
		if err != nil {
			return r, fmt.Errorf("list passkeys: %w", err)
		}
		r.Passkeys = len(keys)
	}
	before := func(ctx context.Context) error {
		if hook == nil {
			return nil
		}
		err := run(ctx, "BeforeDeleteAccount", func() error { return hook(ctx, u.Clone()) })
		var ae *Error
		if err != nil && !errors.As(err, &ae) && !errors.Is(err, user.ErrReferenced) {
			return fmt.Errorf("%w: %w", errHookFailed, err)
		}
		return err
	}
	var err error
	if d, ok := users.(user.AccountDeleter); ok && hook != nil {
		err = d.DeleteWith(ctx, u.ID, before)
	} else if err = before(ctx); err == nil {
		err = reg.Delete(ctx, u.ID)
	}
	if err != nil {
		return r, err
	}
	r.User = true
	return r, nil
}

// ownedPart is one kind of record a user owns outside the user row,
// deleted after the user: name for the log, erase to delete them all. A
// store part that keeps such records (API keys, refresh-token families)
// adds its entry in ownedParts.
type ownedPart struct {
	name  string
	erase func(ctx context.Context, userID string) error
}

// ownedParts lists what users (and the app's stores beside it) hold for a
// user beyond what Registration.Delete deletes, each found by an interface
// check.
func ownedParts(users user.Accounts) []ownedPart {
	var parts []ownedPart
	if ec, ok := users.(user.EmailCodeEraser); ok {
		parts = append(parts, ownedPart{"email code", ec.DeleteEmailCode})
	}
	if ks, ok := users.(user.APIKeys); ok {
		parts = append(parts, ownedPart{"api keys", func(ctx context.Context, userID string) error {
			_, err := ks.RevokeAPIKeys(ctx, userID)
			return err
		}})
	}
	return parts
}

// eraseOwned deletes what the user owns besides the user row: the parts
// of ownedParts, the session records and the trusted devices. It reports
// each failure to failed and goes on; the counts are -1 for a store the
// app keeps none of, emailCodes whether the store erased its codes.
func eraseOwned(ctx context.Context, users user.Accounts, sessions, trusted session.Store, userID string,
	failed func(what string, err error)) (emailCodes bool, nSessions, nTrusted int) {
	for _, p := range ownedParts(users) {
		if err := p.erase(ctx, userID); err != nil {
			failed(p.name, err)
		} else if p.name == "email code" {
			emailCodes = true
		}
	}
	nSessions, nTrusted = -1, -1
	for _, st := range []struct {
		store session.Store
		n     *int
		what  string
	}{{sessions, &nSessions, "session records"}, {trusted, &nTrusted, "trusted devices"}} {
		if st.store == nil {
			continue
		}
		list, err := st.store.List(ctx, userID)
		if err != nil {
			failed(st.what, err)
			continue
		}
		if err := st.store.DeleteAll(ctx, userID, ""); err != nil {
			failed(st.what, err)
			continue
		}
		*st.n = len(list)
	}
	return emailCodes, nSessions, nTrusted
}

// AccountExport is what GET /api/auth/export answers: what authkit holds
// about the signed-in user, without a secret or a hash (no password hash,
// TOTP secret, recovery-code hash, passkey public key or session id).
type AccountExport struct {
	Account    user.Public
	Sessions   []SessionInfo       // nil without Config.Sessions
	Devices    []TrustedDeviceInfo // nil without Config.TrustedDevices
	Passkeys   []PasskeyInfo       // nil when the store keeps none
	Identities []ExportedIdentity  // nil when the store keeps none
	APIKeys    []APIKeyInfo        // nil without Config.APIKeys; IDs cleared
}

// ExportedIdentity is one sign-in with an outside provider linked to the
// account, as the export shows it.
type ExportedIdentity struct {
	Provider string
	Email    string // the address the provider gave; may be empty
	LinkedAt string // ISO 8601
}

// ExportAccount is GET /api/auth/export: what authkit holds about the
// signed-in user (GDPR Art. 15 and 20). It needs a recent authentication
// ([ErrReauthenticationRequired]).
func (s *Service) ExportAccount(ctx context.Context, v *Visit) (_ AccountExport, err error) {
	ctx, flow := s.enter(ctx, v, "export")
	defer flow.end(&err)
	u, err := s.RecentUser(ctx, v)
	if err != nil {
		return AccountExport{}, err
	}
	out := AccountExport{Account: u.Public()}
	if s.cfg.Sessions != nil {
		if out.Sessions, err = s.ListSessions(ctx, v); err != nil {
			return AccountExport{}, err
		}
		for i := range out.Sessions {
			out.Sessions[i].ID = "" // a session's id ends it: not for a file
		}
	}
	if s.cfg.TrustedDevices != nil {
		if out.Devices, err = s.TrustedDevices(ctx, v); err != nil {
			return AccountExport{}, err
		}
		for i := range out.Devices {
			out.Devices[i].ID = ""
		}
	}
	if s.users.passkeys != nil {
		if out.Passkeys, err = s.ListPasskeys(ctx, v); err != nil {
			return AccountExport{}, err
		}
	}
	if ids, ok := s.cfg.Users.(user.Identities); ok {
		list, err := ids.ListIdentities(ctx, u.ID)
		if err != nil {
			return AccountExport{}, fmt.Errorf("export: identities: %w", err)
		}
		out.Identities = make([]ExportedIdentity, len(list))
		for i, id := range list {
			out.Identities[i] = ExportedIdentity{Provider: id.Provider, Email: id.Email, LinkedAt: isoTime(id.LinkedAt)}
		}
	}
	if s.cfg.APIKeys.Enabled {
		if out.APIKeys, err = s.ListAPIKeys(ctx, v); err != nil {
			return AccountExport{}, err
		}
		for i := range out.APIKeys {
			out.APIKeys[i].ID = ""
		}
	}
	return out, nil
}

func deleteAccountRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("password"), str("code"))
	if err == nil {
		err = s.DeleteAccount(ctx, v, DeleteAccountInput{Password: in.str("password"), Code: in.str("code")})
	}
	return s.answer(ctx, v, "delete account", s.say(v, "account_deleted", msgAccountDeleted), err)
}

// exportJSON is the export on the wire.
type exportJSON struct {
	Account    user.Public      `json:"account"`
	Sessions   []exportSession  `json:"sessions"`
	Devices    []exportDevice   `json:"devices"`
	Passkeys   []exportPasskey  `json:"passkeys"`
	Identities []exportIdentity `json:"identities"`
	APIKeys    []exportAPIKey   `json:"apiKeys"`
}

type exportAPIKey struct {
	Name       string   `json:"name"`
	Scopes     []string `json:"scopes"`
	CreatedAt  string   `json:"createdAt"`
	ExpiresAt  string   `json:"expiresAt"`
	LastUsedAt string   `json:"lastUsedAt"`
}

type exportSession struct {
	Current    bool   `json:"current"`
	CreatedAt  string `json:"createdAt"`
	LastSeenAt string `json:"lastSeenAt"`
	IP         string `json:"ip"`
	UserAgent  string `json:"userAgent"`
}

type exportDevice struct {
	CreatedAt  string `json:"createdAt"`
	LastUsedAt string `json:"lastUsedAt"`
	ExpiresAt  string `json:"expiresAt"`
	IP         string `json:"ip"`
	UserAgent  string `json:"userAgent"`
}

type exportPasskey struct {
	Name       string `json:"name"`
	CreatedAt  string `json:"createdAt"`
	LastUsedAt string `json:"lastUsedAt"`
	BackedUp   bool   `json:"backedUp"`
}

type exportIdentity struct {
	Provider string `json:"provider"`
	Email    string `json:"email"`
	LinkedAt string `json:"linkedAt"`
}

// MarshalJSON is the export as GET /api/auth/export answers it: account
// (the User schema), sessions, devices, passkeys, identities and API keys
// (metadata only), each a
// list (empty, never null), times in ISO 8601, no ids.
func (ex AccountExport) MarshalJSON() ([]byte, error) {
	out := exportJSON{Account: ex.Account, Sessions: []exportSession{}, Devices: []exportDevice{}, Passkeys: []exportPasskey{}, Identities: []exportIdentity{}, APIKeys: []exportAPIKey{}}
	for _, si := range ex.Sessions {
		out.Sessions = append(out.Sessions, exportSession{Current: si.Current, CreatedAt: isoTime(si.CreatedAt), LastSeenAt: isoTime(si.LastSeenAt), IP: si.IP, UserAgent: si.UserAgent})
	}
	for _, d := range ex.Devices {
		out.Devices = append(out.Devices, exportDevice{CreatedAt: isoTime(d.CreatedAt), LastUsedAt: isoTime(d.LastUsedAt), ExpiresAt: isoTime(d.ExpiresAt), IP: d.IP, UserAgent: d.UserAgent})
	}
	for _, p := range ex.Passkeys {
		last := ""
		if !p.LastUsedAt.IsZero() {
			last = isoTime(p.LastUsedAt)
		}
		out.Passkeys = append(out.Passkeys, exportPasskey{Name: p.Name, CreatedAt: isoTime(p.CreatedAt), LastUsedAt: last, BackedUp: p.BackedUp})
	}
	for _, id := range ex.Identities {
		out.Identities = append(out.Identities, exportIdentity(id))
	}
	for _, k := range ex.APIKeys {
		last := ""
		if !k.LastUsedAt.IsZero() {
			last = isoTime(k.LastUsedAt)
		}
		out.APIKeys = append(out.APIKeys, exportAPIKey{Name: k.Name, Scopes: append([]string{}, k.Scopes...), CreatedAt: isoTime(k.CreatedAt), ExpiresAt: isoTime(k.ExpiresAt), LastUsedAt: last})
	}
	return json.Marshal(out)
}

func exportRoute(ctx context.Context, s *Service, v *Visit) Response {
	ex, err := s.ExportAccount(ctx, v)
	if err != nil {
		return s.failure(ctx, v, "export", err)
	}
	rsp := s.respond(v, http.StatusOK, ex)
	rsp.Header.Set("Content-Disposition", `attachment; filename="account-data.json"`)
	return rsp
}
