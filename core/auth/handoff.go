package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
)

// A hand-off carries a sign-in that ran in a browser over to a native
// app, as OAuth 2.0 for native apps does (RFC 8252 with PKCE, RFC 7636):
// the app opens the system browser at a flow that signs in in token mode
// (the social module's start with appRedirect and codeChallenge), the
// flow keeps what it issued under a one-time code ([Modules.HandOff]) and
// sends the browser to the app's redirect with it, and the app exchanges
// the code with the verifier only it knows ([Service.ExchangeCode], POST
// /api/auth/token/exchange). Whoever intercepts the redirect (another
// app claiming the same scheme) holds a code it cannot exchange.

// HandOffLifetime is how long a hand-off code can be exchanged.
const HandOffLifetime = time.Minute

// handOffCodeBytes is the size of a hand-off code's random part.
const handOffCodeBytes = 32

// handOff is what a hand-off code stands for, sealed with Config.Keys.
type handOff struct {
	Challenge string `json:"c"`           // the app's S256 code challenge
	Access    string `json:"a,omitempty"` // the tokens the flow issued
	Refresh   string `json:"r,omitempty"`
	Expires   int64  `json:"e,omitempty"` // the access token's end, Unix ms
	Pending   string `json:"p,omitempty"` // or the pending token of a second step
}

// TokenVisit makes v a token-mode visit whatever its request carries: the
// session a flow starts in it is handed out as tokens ([Visit.Tokens]),
// not set as a cookie; its other cookies (a module's state) are as they
// were. For a module whose flow runs in a browser on behalf of a native
// app, before [Modules.HandOff]. Without Config.Tokens it fails with
// ErrNotFound.
func (m *Modules) TokenVisit(v *Visit) error {
	s := m.svc()
	if !s.cfg.Tokens.Enabled {
		return ErrNotFound
	}
	v.tokenMode, v.bearer = true, ""
	v.sess = s.sessions.TokenSession("")
	return nil
}

// HandOff keeps what the token-mode visit v issued (its tokens, or the
// pending token of a second step) for HandOffLifetime under a new
// one-time code, sealed with Config.Keys, for the app that holds the
// verifier of challenge (PKCE S256: base64url of the SHA-256 of the
// verifier, 43 characters). It returns the code, to send to the app's
// redirect.
func (m *Modules) HandOff(ctx context.Context, v *Visit, challenge string) (string, error) {
	s := m.svc()
	if !v.tokenMode {
		return "", errors.New("auth: hand-off of a visit that is not in token mode")
	}
	if !validChallenge(challenge) {
		return "", errors.New("auth: hand-off: the code challenge is not S256")
	}
	h := handOff{Challenge: challenge, Pending: v.pending}
	if t, ok := v.sess.Tokens(); ok {
		h.Access, h.Refresh, h.Expires = t.Access, t.Refresh, t.AccessExpires.UnixMilli()
	} else if h.Pending == "" {
		return "", errors.New("auth: hand-off of a visit that issued nothing")
	}
	var raw [handOffCodeBytes]byte
	if _, err := io.ReadFull(s.cfg.Rand, raw[:]); err != nil {
		return "", fmt.Errorf("auth: hand-off code: %w", err)
	}
	code := base64.RawURLEncoding.EncodeToString(raw[:])
	plain, err := json.Marshal(h)
	if err != nil {
		return "", fmt.Errorf("auth: hand-off: %w", err)
	}
	sealed, err := s.keys.Encrypt(plain, []byte("hand-off"))
	if err != nil {
		return "", fmt.Errorf("auth: hand-off: seal: %w", err)
	}
	if err := s.handOffs().Put(ctx, handOffKey(code), []byte(sealed), s.now().Add(HandOffLifetime)); err != nil {
		return "", fmt.Errorf("auth: hand-off: %w: %w", errBackend, err)
	}
	return code, nil
}

// handOffs is the one-time store of hand-off codes: the refresh
// families' (Config.Tokens.Families), so the instance the app's exchange
// reaches finds what another one kept.
func (s *Service) handOffs() onetime.Store {
	if s.cfg.Tokens.Families != nil {
		return s.cfg.Tokens.Families
	}
	return s.pendingLogins
}

func handOffKey(code string) string {
	sum := sha256.Sum256([]byte(code))
	return "hand-off:" + hex.EncodeToString(sum[:])
}

// validChallenge reports whether c is an S256 code challenge: 43
// base64url characters (RFC 7636 4.2).
func validChallenge(c string) bool {
	b, err := base64.RawURLEncoding.DecodeString(c)
	return err == nil && len(c) == 43 && len(b) == sha256.Size
}

// ExchangeInput is what [Service.ExchangeCode] takes.
type ExchangeInput struct {
	Code         string // the hand-off code the app's redirect carried
	CodeVerifier string // the PKCE verifier whose S256 challenge started the flow
}

// ExchangeResult is what a hand-off carried: tokens, or a second step.
type ExchangeResult struct {
	Tokens            Tokens
	RequiresTwoFactor bool   // the app finishes the second step with PendingToken
	PendingToken      string // the pending token, as Authorization: Bearer on the 2FA routes
}

// ExchangeCode turns a hand-off code into what the flow issued, once: the
// code is taken whatever happens, so a wrong verifier spends it. v
// becomes a token-mode visit whose answer carries the tokens or the
// pending token. Errors: ErrHandOffRequired, ErrInvalidHandOff (unknown,
// used or expired code, wrong verifier); ErrNotFound without
// Config.Tokens.
func (s *Service) ExchangeCode(ctx context.Context, v *Visit, in ExchangeInput) (ExchangeResult, error) {
	ctx = v.context(ctx)
	if !s.cfg.Tokens.Enabled {
		return ExchangeResult{}, ErrNotFound
	}
	if in.Code == "" || in.CodeVerifier == "" {
		return ExchangeResult{}, ErrHandOffRequired
	}
	if len(in.Code) > 64 || len(in.CodeVerifier) > 128 {
		return ExchangeResult{}, ErrInvalidHandOff
	}
	sealed, err := s.handOffs().Take(ctx, handOffKey(in.Code), s.now())
	if errors.Is(err, onetime.ErrNotFound) {
		return ExchangeResult{}, ErrInvalidHandOff
	}
	if err != nil {
		return ExchangeResult{}, fmt.Errorf("exchange: %w: %w", errBackend, err)
	}
	plain, err := s.keys.Decrypt(string(sealed), []byte("hand-off"))
	if err != nil {
		return ExchangeResult{}, ErrInvalidHandOff
	}
	var h handOff
	if err := json.Unmarshal(plain, &h); err != nil {
		return ExchangeResult{}, ErrInvalidHandOff
	}
	sum := sha256.Sum256([]byte(in.CodeVerifier))
	if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(h.Challenge)) != 1 {
		return ExchangeResult{}, ErrInvalidHandOff
	}
	v.tokenMode, v.bearer = true, ""
	if h.Pending != "" {
		v.pending = h.Pending
		return ExchangeResult{RequiresTwoFactor: true, PendingToken: h.Pending}, nil
	}
	t := Tokens{AccessToken: h.Access, RefreshToken: h.Refresh, TokenType: "Bearer",
		ExpiresIn: max(0, int((time.UnixMilli(h.Expires).Sub(s.now())+time.Second-1)/time.Second))} // whole seconds, rounded up
	v.issued = &t
	return ExchangeResult{Tokens: t}, nil
}

func exchangeRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("code"), str("codeVerifier"))
	if err != nil {
		return s.failure(ctx, v, "exchange", err)
	}
	res, err := s.ExchangeCode(ctx, v, ExchangeInput{Code: in.str("code"), CodeVerifier: in.str("codeVerifier")})
	if err != nil {
		return s.failure(ctx, v, "exchange", err)
	}
	if res.RequiresTwoFactor {
		return s.respond(v, http.StatusOK, struct {
			RequiresTwoFactor bool `json:"requiresTwoFactor"`
		}{true}) // the pending token: withTokens
	}
	return s.respond(v, http.StatusOK, struct{}{}) // the tokens: withTokens
}
