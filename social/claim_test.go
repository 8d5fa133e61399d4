package social_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// TestClaimUnverifiedRace: 50 racing claims of one unverified account
// with a password (each with the account as it read it): exactly one
// wins, the others change nothing and answer social_link_required; the
// account ends verified, without a password, its session version raised
// once.
func TestClaimUnverifiedRace(t *testing.T) {
	users := store.NewMemory(store.MemoryConfig{})
	svc, _ := authtest.NewService(t, users)
	ctx := context.Background()
	hash, err := password.ForTesting().Hash(ctx, "registrant's password")
	if err != nil {
		t.Fatal(err)
	}
	u, err := users.Create(ctx, &user.User{Email: "owner@example.com", Name: "Registrant", PasswordHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	const racers = 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, refused := 0, 0
	start := make(chan struct{})
	for range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := svc.Visit(auth.HTTPRequest(httptest.NewRequest("GET", "/api/auth/oauth/test/callback", nil), nil))
			<-start
			err := svc.Modules().ClaimUnverified(ctx, v, u.Clone(), u.Email, "social")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, auth.ErrSocialLinkRequired):
				refused++
			default:
				t.Errorf("claim: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if wins != 1 || refused != racers-1 {
		t.Fatalf("%d wins, %d refused, want 1 and %d", wins, refused, racers-1)
	}
	got, err := users.ByID(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.PasswordHash != "" || !got.EmailVerified() || got.SessionVersion != u.SessionVersion+1 {
		t.Fatalf("after the race: password %q, verified %v, session version %d (was %d)", got.PasswordHash, got.EmailVerified(), got.SessionVersion, u.SessionVersion)
	}
	// A verified account is never claimed.
	if err := svc.Modules().ClaimUnverified(ctx, svc.Visit(auth.HTTPRequest(httptest.NewRequest("GET", "/", nil), nil)), got, got.Email, "social"); !errors.Is(err, auth.ErrSocialLinkRequired) {
		t.Fatalf("claim of a verified account: %v", err)
	}
}
