package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/session"
)

// Token mode: the same flows for a client that keeps no cookies (a
// mobile app, a command-line tool, another service).
//
// A request is in token mode when Config.Tokens.Enabled and it carries
// the header "Auth-Mode: token", or an Authorization: Bearer access or
// pending token. Every flow then answers as it does for a browser, but
// what it would set as the session cookie comes in the body:
//
//	{"success": true, "accessToken": "akat_...", "refreshToken": "akrt_...",
//	 "expiresIn": 900, "tokenType": "Bearer"}
//
// and a login waiting for its second step answers
// {"requiresTwoFactor": true, "pendingToken": "akpt_..."} instead of the
// 2fa_pending cookie. The client sends the access token as
// "Authorization: Bearer akat_..." on every request (the routes, and an
// app's own routes behind RequireUser), the pending token the same way on
// the second-step routes, and the refresh token to POST
// /api/auth/token/refresh alone. Other cookies (a trusted browser, the
// email sign-in binding) are set as for a browser.
//
// The session behind the tokens is a session record like a browser's: it
// is listed with the others, logout, logout-everywhere, a password reset
// and every change that ends sessions end it, and its refresh token
// rotates on every use with reuse detection (package session, "Token
// mode"). A token-mode request without a Cookie header needs no
// cross-origin check: it carries no credential a browser adds by itself.

// AuthModeHeader is the request header that asks for token mode
// ("Auth-Mode: token").
const AuthModeHeader = "Auth-Mode"

// PendingPrefix starts a pending token: the 2fa_pending cookie's value
// handed to a token-mode client.
const PendingPrefix = "akpt_"

// TokenConfig turns on token mode (Config.Tokens).
type TokenConfig struct {
	// Enabled turns token mode on. It needs session records (not
	// StatelessSessions). Default: false.
	Enabled bool

	// AccessLifetime is how long an access token verifies. Default: 15
	// minutes (session.DefaultAccessLifetime).
	AccessLifetime time.Duration

	// Families keeps each token-mode session's next refresh generation
	// (see package session). Several instances share one. Default:
	// Config.PendingLogins's store (the user store's own one-time store,
	// or an in-process one).
	Families onetime.Store
}

// Tokens is the body of a token-mode answer that (re)issued a session.
type Tokens struct {
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
	ExpiresIn    int    `json:"expiresIn"` // seconds the access token verifies
	TokenType    string `json:"tokenType"` // "Bearer"
}

// tokenRequest reports whether r asks for token mode, and the bearer
// token it carries ("" for none).
func tokenRequest(r Request) (bearer string, ok bool) {
	bearer = bearerToken(r)
	if strings.EqualFold(strings.TrimSpace(r.Header(AuthModeHeader)), "token") {
		return bearer, true
	}
	return bearer, strings.HasPrefix(bearer, session.AccessPrefix) || strings.HasPrefix(bearer, PendingPrefix)
}

// bearerToken is the token of r's Authorization: Bearer header, "" for
// none (RFC 6750 2.1: the scheme is case-insensitive).
func bearerToken(r Request) string {
	h := r.Header("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		return ""
	}
	return strings.TrimSpace(h[7:])
}

// HasTokenMode reports whether token mode is on (Config.Tokens.Enabled).
func (s *Service) HasTokenMode() bool { return s.cfg.Tokens.Enabled }

// TokenMode reports whether the visit's request is in token mode.
func (v *Visit) TokenMode() bool { return v.tokenMode }

// Tokens returns the tokens the flow issued in this token-mode visit, for
// an app that calls the typed methods and writes its own answer.
func (v *Visit) Tokens() (Tokens, bool) {
	if v.issued != nil {
		return *v.issued, true
	}
	t, ok := v.sess.Tokens()
	if !ok {
		return Tokens{}, false
	}
	return Tokens{AccessToken: t.Access, RefreshToken: t.Refresh, ExpiresIn: int(v.s.sessions.AccessLifetime() / time.Second), TokenType: "Bearer"}, true
}

// PendingToken returns the pending token a login waiting for its second
// step handed out in this token-mode visit ("" for none).
func (v *Visit) PendingToken() string { return v.pending }

// pendingValue is the request's pending login: the 2fa_pending cookie, or
// in token mode the pending token it sent as Authorization: Bearer.
func (v *Visit) pendingValue() (string, bool) {
	if v.tokenMode {
		raw, ok := strings.CutPrefix(v.bearer, PendingPrefix)
		return raw, ok && raw != ""
	}
	return v.req.Cookie(PendingCookie)
}

// setPending hands the visit's client its pending login: the 2fa_pending
// cookie, or in token mode the pending token in the answer's body. An
// empty value ends it.
func (s *Service) setPending(v *Visit, value string) {
	if v.tokenMode {
		if value != "" {
			value = PendingPrefix + value
		}
		v.pending = value
		return
	}
	maxAge := int(PendingLifetime / time.Second)
	if value == "" {
		maxAge = -1
	}
	v.setCookie(s.pendingCookie(value, maxAge))
}

// EventRefreshTokenReused is audited when a refresh token is used a second
// time: the session it belonged to has been ended.
const EventRefreshTokenReused EventType = "refresh_token_reused"

// RefreshTokens turns a token-mode session's refresh token into a new
// pair (the one used is retired) and makes v a token-mode visit of that
// session. A refresh token used before ends its session, for whoever
// holds a copy and for the client alike, and is audited
// (EventRefreshTokenReused); no mail goes out. Errors:
// ErrInvalidRefreshToken (401) for every refusal, ErrNotFound without
// token mode.
func (s *Service) RefreshTokens(ctx context.Context, v *Visit, refreshToken string) (Tokens, error) {
	ctx = v.context(ctx)
	if !s.cfg.Tokens.Enabled {
		return Tokens{}, ErrNotFound
	}
	v.tokenMode, v.bearer = true, ""
	v.sess = s.sessions.TokenSession("")
	u, err := v.sess.Refresh(ctx, refreshToken)
	switch {
	case errors.Is(err, session.ErrRefreshReused):
		e := Event{Type: EventRefreshTokenReused}
		if u != nil {
			e.UserID = u.ID
		}
		s.audit(ctx, v, e)
		return Tokens{}, ErrInvalidRefreshToken
	case errors.Is(err, session.ErrInvalidRefresh):
		return Tokens{}, ErrInvalidRefreshToken
	case err != nil:
		return Tokens{}, fmt.Errorf("refresh: %w: %w", errBackend, err)
	}
	t, _ := v.Tokens()
	return t, nil
}

func refreshTokenRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("refreshToken"))
	if err == nil && in.str("refreshToken") == "" {
		err = ErrRefreshTokenRequired
	}
	if err != nil {
		return s.failure(ctx, v, "refresh", err)
	}
	_, err = s.RefreshTokens(ctx, v, in.str("refreshToken"))
	if err != nil {
		return s.failure(ctx, v, "refresh", err)
	}
	return s.respond(v, http.StatusOK, struct{}{}) // the tokens: withTokens
}

// withTokens adds to body, an answer of a token-mode visit, the tokens the
// flow issued or the pending token it handed out.
func (v *Visit) withTokens(body []byte) []byte {
	var extra any
	if t, ok := v.Tokens(); ok {
		extra = t
	} else if v.pending != "" {
		extra = struct {
			PendingToken string `json:"pendingToken"`
		}{v.pending}
	} else {
		return body
	}
	add, err := json.Marshal(extra)
	if err != nil || len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' {
		return body
	}
	out := bytes.TrimSuffix(body, []byte("}"))
	if len(bytes.TrimSpace(out)) > 1 {
		out = append(out, ',')
	}
	return append(out, add[1:]...)
}
