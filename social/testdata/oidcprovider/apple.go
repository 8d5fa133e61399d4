package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// appleStorage is the example storage answering as Sign in with Apple
// does where it differs from the example: the client secret is a JWT the
// client signs ES256 (iss its team, sub the client, aud the issuer, kid
// its key, at most six months long), checked against the team's public
// key; email_verified is the string "true"; no name is given (Apple
// posts it once, in the form, which the tests add as Apple's page does).
// response_mode=form_post is the op package's own.
type appleStorage struct {
	*storage.Storage
	key            *ecdsa.PublicKey
	team, kid, aud string
}

// newAppleStorage reads the public key (PEM "PUBLIC KEY") from file.
func newAppleStorage(s *storage.Storage, file, team, kid, aud string) (*appleStorage, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("apple key: no PEM")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	ec, ok := k.(*ecdsa.PublicKey)
	if !ok {
		return nil, errors.New("apple key: not ECDSA")
	}
	return &appleStorage{Storage: s, key: ec, team: team, kid: kid, aud: aud}, nil
}

// AuthorizeClientIDSecret checks the client secret JWT.
func (s *appleStorage) AuthorizeClientIDSecret(_ context.Context, clientID, secret string) error {
	tok, err := jwt.ParseSigned(secret, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return fmt.Errorf("client secret: %w", err)
	}
	if len(tok.Headers) != 1 || tok.Headers[0].KeyID != s.kid {
		return errors.New("client secret: not the key's kid")
	}
	var c jwt.Claims
	if err := tok.Claims(s.key, &c); err != nil {
		return fmt.Errorf("client secret: %w", err)
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: s.team, Subject: clientID, AnyAudience: jwt.Audience{s.aud}, Time: time.Now()}, 0); err != nil {
		return fmt.Errorf("client secret: %w", err)
	}
	if c.IssuedAt == nil || c.Expiry == nil || c.Expiry.Time().Sub(c.IssuedAt.Time()) > 15777000*time.Second {
		return errors.New("client secret: lasts more than six months")
	}
	return nil
}

func (s *appleStorage) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, token op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, token, scopes); err != nil {
		return err
	}
	appleShaped(ui)
	return nil
}

func (s *appleStorage) SetUserinfoFromToken(ctx context.Context, ui *oidc.UserInfo, tokenID, subject, origin string) error {
	if err := s.Storage.SetUserinfoFromToken(ctx, ui, tokenID, subject, origin); err != nil {
		return err
	}
	appleShaped(ui)
	return nil
}

// appleShaped makes the example's claims Apple's: email_verified the
// string "true", no name.
func appleShaped(ui *oidc.UserInfo) {
	if ui.EmailVerified {
		ui.EmailVerified = false
		ui.AppendClaims("email_verified", "true")
	}
	ui.Name, ui.GivenName, ui.FamilyName, ui.PreferredUsername = "", "", "", ""
}
