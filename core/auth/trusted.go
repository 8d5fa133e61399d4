package auth

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// Trusted devices (Config.TrustedDevices): a browser that passed the second
// factor with "trustDevice": true skips it at later password logins for
// Config.TrustedDeviceLifetime.
//
// The trust is the trusted-device cookie, a token of its own purpose
// ("trusted_device", so it verifies as nothing else and nothing else as it)
// holding the user id, the user's session version and the id of a record in
// Config.TrustedDevices, a session.Store of its own (the design of session
// records reused: the same record, the same conformance suite). A login
// skips the second step only when the cookie verifies, is the user's, its
// version is the user's current one and its record still exists: ending
// the record (DELETE /api/2fa/trusted-devices/{id}) or raising the version
// (password reset or change, email change, 2FA disable, logout-everywhere,
// which also delete every record) ends the trust.

// TrustedDeviceCookie is the name of the cookie that marks a browser as
// trusted to skip the second factor (docs/api.md, Cookies).
const TrustedDeviceCookie = "authkit_trusted"

// DefaultTrustedDeviceLifetime is how long a browser stays trusted unless
// Config.TrustedDeviceLifetime says otherwise.
const DefaultTrustedDeviceLifetime = 30 * 24 * time.Hour

// purposeTrusted is the token purpose of the trusted-device cookie.
const purposeTrusted = "trusted_device"

// TrustedDeviceInfo is one trusted browser of the signed-in user.
type TrustedDeviceInfo struct {
	ID         string
	Current    bool // the visit's browser
	CreatedAt  time.Time
	LastUsedAt time.Time // the last login it spared a second step
	ExpiresAt  time.Time
	IP         string // the client address when it was trusted
	UserAgent  string
}

func (s *Service) trustedCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: TrustedDeviceCookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: !s.cfg.Insecure, SameSite: http.SameSiteLaxMode,
	}
}

// trustDevice records the visit's browser as trusted by u and sets the
// cookie. Called after a second step succeeded with TrustDevice.
func (s *Service) trustDevice(ctx context.Context, v *Visit, u *user.User) error {
	st := s.cfg.TrustedDevices
	if st == nil {
		return nil
	}
	var b [16]byte
	if _, err := io.ReadFull(s.cfg.Rand, b[:]); err != nil {
		return fmt.Errorf("trust device: random: %w", err)
	}
	now := s.now().Truncate(time.Millisecond)
	r := session.Record{ID: hex.EncodeToString(b[:]), UserID: u.ID, CreatedAt: now, LastSeenAt: now,
		ExpiresAt: now.Add(s.cfg.TrustedDeviceLifetime), IP: v.clientAddr(), UserAgent: v.userAgent()}
	if err := session.CreateBounded(ctx, st, r, s.cfg.MaxSessionsPerUser); err != nil {
		return fmt.Errorf("trust device: %w", err)
	}
	tok, err := s.trusted.CreateWith(u.ID, append(binary.AppendVarint(nil, u.SessionVersion), b[:]...))
	if err != nil {
		return fmt.Errorf("trust device: token: %w", err)
	}
	v.setCookie(s.trustedCookie(tok, int(s.cfg.TrustedDeviceLifetime/time.Second)))
	s.audit(ctx, v, Event{Type: EventDeviceTrusted, UserID: u.ID})
	return nil
}

// trustedRecord returns the id of the record the visit's trusted-device
// cookie names when that cookie is u's and still stands ("" otherwise),
// and the error of a store that failed.
func (s *Service) trustedRecord(ctx context.Context, v *Visit, u *user.User) (string, error) {
	st := s.cfg.TrustedDevices
	if st == nil {
		return "", nil
	}
	raw, ok := v.req.Cookie(TrustedDeviceCookie)
	if !ok || raw == "" {
		return "", nil
	}
	c, err := s.trusted.Verify(raw)
	if err != nil || c.UserID != u.ID {
		return "", nil
	}
	version, n := binary.Varint(c.Data)
	if n <= 0 || len(c.Data)-n != 16 || version != u.SessionVersion {
		return "", nil
	}
	id := hex.EncodeToString(c.Data[n:])
	r, err := st.Get(ctx, id)
	switch {
	case errors.Is(err, user.ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("trusted device: %w", err)
	case r.UserID != u.ID || !s.now().Before(r.ExpiresAt):
		return "", nil
	}
	now := s.now().Truncate(time.Millisecond)
	if err := st.Touch(ctx, id, now, r.ExpiresAt); err != nil {
		if errors.Is(err, user.ErrNotFound) { // removed meanwhile: no trust
			return "", nil
		}
		return "", fmt.Errorf("trusted device: %w", err)
	}
	return id, nil
}

// currentTrusted returns the record id of the visit's trusted-device cookie
// when it verifies as u's, without reading the store.
func (s *Service) currentTrusted(ctx context.Context, v *Visit, u *user.User) string {
	raw, ok := v.req.Cookie(TrustedDeviceCookie)
	if !ok || raw == "" {
		return ""
	}
	c, err := s.trusted.Verify(raw)
	if err != nil || c.UserID != u.ID {
		return ""
	}
	_, n := binary.Varint(c.Data)
	if n <= 0 || len(c.Data)-n != 16 {
		return ""
	}
	return hex.EncodeToString(c.Data[n:])
}

// TrustedDevices is GET /api/2fa/trusted-devices: the signed-in user's
// trusted browsers, newest first. Without Config.TrustedDevices it fails
// with [ErrFeatureDisabled].
func (s *Service) TrustedDevices(ctx context.Context, v *Visit) (_ []TrustedDeviceInfo, err error) {
	ctx, flow := s.enter(ctx, v, "2fa/trusted-devices")
	defer flow.end(&err)
	if s.cfg.TrustedDevices == nil {
		return nil, ErrFeatureDisabled
	}
	u, err := s.CurrentUser(ctx, v)
	if err != nil {
		return nil, err
	}
	recs, err := s.cfg.TrustedDevices.List(ctx, u.ID)
	if err != nil {
		return nil, fmt.Errorf("trusted devices: %w", err)
	}
	now, cur := s.now(), s.currentTrusted(ctx, v, u)
	out := make([]TrustedDeviceInfo, 0, len(recs))
	for _, r := range recs {
		if !now.Before(r.ExpiresAt) {
			continue
		}
		out = append(out, TrustedDeviceInfo{ID: r.ID, Current: r.ID == cur, CreatedAt: r.CreatedAt, LastUsedAt: r.LastSeenAt,
			ExpiresAt: r.ExpiresAt, IP: r.IP, UserAgent: r.UserAgent})
	}
	return out, nil
}

// ForgetTrustedDeviceInput is what ForgetTrustedDevice takes.
type ForgetTrustedDeviceInput struct {
	ID string // a trusted device id from TrustedDevices
}

// ForgetTrustedDevice is DELETE /api/2fa/trusted-devices/{id}: the device
// asks for the second factor again from its next login. An id that is not
// one of the user's trusted devices, another user's included, fails with
// [ErrTrustedDeviceNotFound]. It needs no recent authentication: it only
// takes a shortcut away. The visit's own cookie is expired when it is the
// one forgotten.
func (s *Service) ForgetTrustedDevice(ctx context.Context, v *Visit, in ForgetTrustedDeviceInput) (err error) {
	ctx, flow := s.enter(ctx, v, "2fa/trusted-devices/delete")
	defer flow.end(&err)
	if s.cfg.TrustedDevices == nil {
		return ErrFeatureDisabled
	}
	u, err := s.CurrentUser(ctx, v)
	if err != nil {
		return err
	}
	if !isRecordID(in.ID) {
		return ErrTrustedDeviceNotFound // no id authkit makes: no store sees it
	}
	if err := s.cfg.TrustedDevices.Delete(ctx, u.ID, in.ID); err != nil {
		if errors.Is(err, user.ErrNotFound) {
			return ErrTrustedDeviceNotFound
		}
		return fmt.Errorf("forget trusted device: %w", err)
	}
	if s.currentTrusted(ctx, v, u) == in.ID {
		v.setCookie(s.trustedCookie("", -1))
	}
	s.audit(ctx, v, Event{Type: EventDeviceForgotten, UserID: u.ID})
	return nil
}

// forgetTrustedDevices deletes every trusted device of userID, after a
// change that raised the session version (which ends their trust
// already): the list shows only devices that still skip the second step.
func (s *Service) forgetTrustedDevices(ctx context.Context, v *Visit, userID string) error {
	if s.cfg.TrustedDevices == nil {
		return nil
	}
	if err := s.cfg.TrustedDevices.DeleteAll(ctx, userID, ""); err != nil {
		return fmt.Errorf("forget trusted devices: %w", err)
	}
	return nil
}

// trustedDeviceJSON is one trusted device on the wire.
type trustedDeviceJSON struct {
	ID         string `json:"id"`
	Current    bool   `json:"current"`
	CreatedAt  string `json:"createdAt"`
	LastUsedAt string `json:"lastUsedAt"`
	ExpiresAt  string `json:"expiresAt"`
	IP         string `json:"ip"`
	UserAgent  string `json:"userAgent"`
}

func toTrustedDeviceJSON(d TrustedDeviceInfo) trustedDeviceJSON {
	return trustedDeviceJSON{ID: d.ID, Current: d.Current, CreatedAt: isoTime(d.CreatedAt), LastUsedAt: isoTime(d.LastUsedAt),
		ExpiresAt: isoTime(d.ExpiresAt), IP: d.IP, UserAgent: d.UserAgent}
}

func trustedDevicesRoute(ctx context.Context, s *Service, v *Visit) Response {
	return listRoute(ctx, s, v, "trusted devices", "devices", s.TrustedDevices, toTrustedDeviceJSON)
}

func forgetTrustedDeviceRoute(ctx context.Context, s *Service, v *Visit) Response {
	err := s.ForgetTrustedDevice(ctx, v, ForgetTrustedDeviceInput{ID: v.req.PathValue("id")})
	return s.answer(ctx, v, "forget trusted device", s.say(v, "trusted_device_removed", msgTrustedDeviceRemoved), err)
}

// maybeTrust trusts the visit's browser after a second step that asked for
// it. The login has succeeded: a failure to record the trust is logged, and
// the next login asks for the second factor again.
func (s *Service) maybeTrust(ctx context.Context, v *Visit, u *user.User, trust bool) {
	if !trust {
		return
	}
	if err := s.trustDevice(ctx, v, u); err != nil {
		s.log.WarnContext(ctx, "authkit: device not trusted", "user", u.ID, "err", err)
	}
}
