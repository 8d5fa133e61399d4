package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
)

// challengeOf is the S256 code challenge of verifier.
func challengeOf(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

const appVerifier = "a-verifier-of-the-app-that-is-long-enough-0123456789"

// handedOff signs ada in on a token-mode visit, as a module's browser flow
// for a native app does, and hands the result off under the challenge of
// appVerifier.
func (f *flow) handedOff(t *testing.T) string {
	t.Helper()
	v := f.visit(newBrowser())
	if err := f.s.Modules().TokenVisit(v); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Login(context.Background(), v, LoginInput{Email: "ada@example.com", Password: "correct horse battery"}); err != nil {
		t.Fatalf("Login: %v", err)
	}
	for _, c := range v.Cookies() {
		if c.Name == f.s.sessions.CookieName() {
			t.Fatalf("a token-mode visit set the session cookie")
		}
	}
	code, err := f.s.Modules().HandOff(context.Background(), v, challengeOf(appVerifier))
	if err != nil {
		t.Fatalf("HandOff: %v", err)
	}
	return code
}

func TestHandOffExchange(t *testing.T) {
	f := newFlow(t, func(c *Config) { c.Tokens.Enabled = true })
	_, u := f.register("ada@example.com", "correct horse battery")
	code := f.handedOff(t)
	ctx := context.Background()

	v := f.visit(newBrowser())
	res, err := f.s.ExchangeCode(ctx, v, ExchangeInput{Code: code, CodeVerifier: appVerifier})
	if err != nil {
		t.Fatalf("ExchangeCode: %v", err)
	}
	if !strings.HasPrefix(res.Tokens.AccessToken, "akat_") || !strings.HasPrefix(res.Tokens.RefreshToken, "akrt_") || res.Tokens.ExpiresIn != 900 {
		t.Fatalf("exchanged %+v: want a token pair, 900 s", res)
	}
	if got, ok := v.Tokens(); !ok || got != res.Tokens {
		t.Errorf("Visit.Tokens after the exchange = %+v, %v", got, ok)
	}
	if got, err := f.s.sessions.AccessUser(ctx, res.Tokens.AccessToken); err != nil || got.ID != u.ID {
		t.Errorf("the exchanged access token: %v, %v; want ada", got, err)
	}
	// Once only.
	if _, err := f.s.ExchangeCode(ctx, f.visit(newBrowser()), ExchangeInput{Code: code, CodeVerifier: appVerifier}); !errors.Is(err, ErrInvalidHandOff) {
		t.Errorf("a second exchange: %v, want ErrInvalidHandOff", err)
	}
}

func TestHandOffRefusals(t *testing.T) {
	ctx := context.Background()
	f := newFlow(t, func(c *Config) { c.Tokens.Enabled = true })
	f.register("ada@example.com", "correct horse battery")

	// A wrong verifier spends the code: an interceptor gets one try, and
	// the rightful app then none.
	code := f.handedOff(t)
	if _, err := f.s.ExchangeCode(ctx, f.visit(newBrowser()), ExchangeInput{Code: code, CodeVerifier: "someone-else's-verifier-0123456789-0123456789"}); !errors.Is(err, ErrInvalidHandOff) {
		t.Errorf("wrong verifier: %v, want ErrInvalidHandOff", err)
	}
	if _, err := f.s.ExchangeCode(ctx, f.visit(newBrowser()), ExchangeInput{Code: code, CodeVerifier: appVerifier}); !errors.Is(err, ErrInvalidHandOff) {
		t.Errorf("right verifier after a wrong one: %v, want ErrInvalidHandOff", err)
	}
	// Expired.
	code = f.handedOff(t)
	f.now = f.now.Add(HandOffLifetime)
	if _, err := f.s.ExchangeCode(ctx, f.visit(newBrowser()), ExchangeInput{Code: code, CodeVerifier: appVerifier}); !errors.Is(err, ErrInvalidHandOff) {
		t.Errorf("expired: %v, want ErrInvalidHandOff", err)
	}
	for name, in := range map[string]ExchangeInput{
		"no code":     {CodeVerifier: appVerifier},
		"no verifier": {Code: "abc"},
	} {
		if _, err := f.s.ExchangeCode(ctx, f.visit(newBrowser()), in); !errors.Is(err, ErrHandOffRequired) {
			t.Errorf("%s: %v, want ErrHandOffRequired", name, err)
		}
	}
	for name, in := range map[string]ExchangeInput{
		"unknown code":  {Code: "abc", CodeVerifier: appVerifier},
		"huge code":     {Code: strings.Repeat("a", 10000), CodeVerifier: appVerifier},
		"huge verifier": {Code: "abc", CodeVerifier: strings.Repeat("a", 10000)},
	} {
		if _, err := f.s.ExchangeCode(ctx, f.visit(newBrowser()), in); !errors.Is(err, ErrInvalidHandOff) {
			t.Errorf("%s: %v, want ErrInvalidHandOff", name, err)
		}
	}
	// HandOff refuses what it cannot carry safely.
	v := f.visit(newBrowser())
	if _, err := f.s.Modules().HandOff(ctx, v, challengeOf(appVerifier)); err == nil {
		t.Error("HandOff of a cookie visit succeeded")
	}
	if err := f.s.Modules().TokenVisit(v); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Modules().HandOff(ctx, v, challengeOf(appVerifier)); err == nil {
		t.Error("HandOff of a visit that issued nothing succeeded")
	}
	if _, err := f.s.Modules().HandOff(ctx, v, "plain"); err == nil {
		t.Error("HandOff with a plain challenge succeeded")
	}
	// Without token mode there is nothing to hand off.
	off := newFlow(t, nil)
	if err := off.s.Modules().TokenVisit(off.visit(newBrowser())); !errors.Is(err, ErrNotFound) {
		t.Errorf("TokenVisit without Config.Tokens: %v, want ErrNotFound", err)
	}
}

// Of 50 exchanges of one code exactly one gets the tokens.
func TestHandOffRace(t *testing.T) {
	f := newFlow(t, func(c *Config) { c.Tokens.Enabled = true })
	f.register("ada@example.com", "correct horse battery")
	code := f.handedOff(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, lost := 0, 0
	for range 50 {
		wg.Go(func() {
			_, err := f.s.ExchangeCode(context.Background(), f.visit(newBrowser()), ExchangeInput{Code: code, CodeVerifier: appVerifier})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, ErrInvalidHandOff):
				lost++
			default:
				t.Errorf("ExchangeCode: %v", err)
			}
		})
	}
	wg.Wait()
	if won != 1 || lost != 49 {
		t.Errorf("%d exchanges won, %d lost; want 1 and 49", won, lost)
	}
}
