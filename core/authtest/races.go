package authtest

import (
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/core/mail"
)

// racers is how many browsers race for one thing.
const racers = 8

// race sends the n requests made by req at once and returns the replies.
func race(t *testing.T, n int, req func(i int) (*reply, error)) []*reply {
	t.Helper()
	out := make([]*reply, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i], errs[i] = req(i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return out
}

// mustOneWinner checks that exactly one reply has status 200 and every
// other one is status {"error": text}; it returns the winner's index.
func mustOneWinner(t *testing.T, rs []*reply, status int, text string) int {
	t.Helper()
	winner := -1
	for i, r := range rs {
		switch {
		case r.status == http.StatusOK && winner < 0:
			winner = i
		case r.status == http.StatusOK:
			t.Errorf("%s: a second request won the race (request %d did too)", r, winner)
		case r.status != status || r.str("error") != text:
			t.Errorf("%s: want %d {\"error\":%q} for a request that lost the race", r, status, text)
		}
	}
	if winner < 0 {
		t.Fatalf("no request won the race: %v", rs)
	}
	return winner
}

// races covers ARCHITECTURE.md "Stores": whatever changes security state under
// concurrency is one conditional store operation, so of several identical
// requests racing, exactly one wins.
func (s suite) races(t *testing.T) {
	t.Parallel()

	t.Run("one TOTP code, many browsers", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, relaxed)
		_, _, secret, _ := e.twoFactorUser(t)
		bs := make([]*client, racers)
		for i := range bs {
			bs[i] = e.client()
			pendingLogin(t, bs[i], "ada@example.com")
		}
		e.nextStep()
		code := e.now(t, secret)
		rs := race(t, racers, func(i int) (*reply, error) {
			return bs[i].try(http.MethodPost, "/api/2fa/verify", "application/json", []byte(`{"code":"`+code+`"}`))
		})
		w := mustOneWinner(t, rs, http.StatusBadRequest, errCodeUsed)
		mustBeSignedIn(t, bs[w], "ada@example.com")
	})

	t.Run("one recovery code, many browsers", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, relaxed)
		_, u, _, codes := e.twoFactorUser(t)
		bs := make([]*client, racers)
		for i := range bs {
			bs[i] = e.client()
			pendingLogin(t, bs[i], "ada@example.com")
		}
		rs := race(t, racers, func(i int) (*reply, error) {
			return bs[i].try(http.MethodPost, "/api/2fa/recover", "application/json", []byte(`{"code":"`+codes[0]+`"}`))
		})
		w := mustOneWinner(t, rs, http.StatusBadRequest, errInvalidRecovery)
		if rs[w].json["remainingCodes"] != float64(7) {
			t.Errorf("%s: want remainingCodes 7", rs[w])
		}
		if n := len(e.byID(t, u.ID).RecoveryCodeHashes); n != 7 {
			t.Errorf("store: %d recovery code hashes, want 7", n)
		}
	})

	t.Run("one reset link, many new passwords", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, relaxed)
		e.seed(t, "ada@example.com")
		tok := e.resetToken(t, "ada@example.com")
		c := e.client()
		pw := func(i int) string { return fmt.Sprintf("new passphrase number %d", i) }
		rs := race(t, racers, func(i int) (*reply, error) {
			return c.try(http.MethodPost, resetPath(tok), "application/json",
				[]byte(`{"password":"`+pw(i)+`","confirmPassword":"`+pw(i)+`"}`))
		})
		w := mustOneWinner(t, rs, http.StatusBadRequest, errResetUsed)
		for i := range racers {
			r := e.client().login("ada@example.com", pw(i))
			if want := i == w; (r.status == http.StatusOK) != want {
				t.Errorf("login with racer %d's password: %s (winner %d)", i, r, w)
			}
		}
	})

	t.Run("one address, many registrations", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, relaxed)
		bs := make([]*client, racers)
		for i := range bs {
			bs[i] = e.client()
		}
		rs := race(t, racers, func(i int) (*reply, error) {
			return bs[i].try(http.MethodPost, "/api/auth/register", "application/json",
				[]byte(fmt.Sprintf(`{"email":"ada@example.com","password":%q,"name":"Racer %d"}`, goodPassword, i)))
		})
		w := mustOneWinner(t, rs, http.StatusBadRequest, errEmailRegistered)
		if got := e.user(t, "ada@example.com").Name; got != fmt.Sprintf("Racer %d", w) {
			t.Errorf("store: name %q, want the winner's %q", got, fmt.Sprintf("Racer %d", w))
		}
		if n := len(e.mails(t, "ada@example.com", mail.KindVerifyEmail)); n != 1 {
			t.Errorf("%d verification mails, want 1", n)
		}
	})

	t.Run("one new address, many accounts", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, relaxed)
		bs := make([]*client, racers)
		for i := range bs {
			email := fmt.Sprintf("user%d@example.com", i)
			e.seed(t, email)
			bs[i] = e.loggedIn(t, email)
		}
		rs := race(t, racers, func(i int) (*reply, error) {
			return bs[i].try(http.MethodPost, "/api/auth/change-email", "application/json",
				[]byte(fmt.Sprintf(`{"newEmail":"wanted@example.com","password":%q}`, goodPassword)))
		})
		w := mustOneWinner(t, rs, http.StatusBadRequest, errEmailInUse)
		mustBeSignedIn(t, bs[w], "wanted@example.com")
		for i := range racers {
			if i != w {
				e.user(t, fmt.Sprintf("user%d@example.com", i))
			}
		}
	})

	t.Run("one setup, many confirmations", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, relaxed)
		c := e.client()
		u := e.signup(t, c, "ada@example.com")
		secret := e.setup2FA(t, c)
		code := e.now(t, secret)
		rs := race(t, racers, func(i int) (*reply, error) {
			return c.try(http.MethodPost, "/api/2fa/confirm", "application/json", []byte(`{"code":"`+code+`"}`))
		})
		w := mustOneWinner(t, rs, http.StatusBadRequest, errNoPendingSetup)
		raw, _ := rs[w].json["recoveryCodes"].([]any)
		if len(raw) != 8 || len(e.byID(t, u.ID).RecoveryCodeHashes) != 8 {
			t.Fatalf("%s: want 8 codes, stored and returned", rs[w])
		}
		// The stored codes are the winner's.
		b := e.client()
		pendingLogin(t, b, "ada@example.com")
		first, _ := raw[0].(string)
		mustBody(t, b.post("/api/2fa/recover", obj{"code": first}), obj{"success": true, "remainingCodes": 7})
	})

	t.Run("the 2FA limit holds under concurrency", func(t *testing.T) {
		t.Parallel()
		e := s.env(t)
		_, _, secret, _ := e.twoFactorUser(t)
		bs := make([]*client, racers)
		for i := range bs {
			bs[i] = e.client()
			pendingLogin(t, bs[i], "ada@example.com")
		}
		wrong := e.wrongCode(t, secret)
		rs := race(t, racers, func(i int) (*reply, error) {
			return bs[i].try(http.MethodPost, "/api/2fa/verify", "application/json", []byte(`{"code":"`+wrong+`"}`))
		})
		mustCounts(t, rs, map[int]int{http.StatusBadRequest: 5, http.StatusTooManyRequests: racers - 5})
	})

	t.Run("the login email limit holds under concurrency", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, trustAll)
		e.seed(t, "ada@example.com")
		bs := make([]*client, racers)
		for i := range bs {
			bs[i] = e.clientFrom(fmt.Sprintf("203.0.113.%d", i+1))
		}
		body := []byte(fmt.Sprintf(`{"email":"ada@example.com","password":%q}`, wrongPassword))
		rs := race(t, racers, func(i int) (*reply, error) {
			return bs[i].try(http.MethodPost, "/api/login", "application/json", body)
		})
		mustCounts(t, rs, map[int]int{http.StatusUnauthorized: 5, http.StatusTooManyRequests: racers - 5})
	})
}

// mustCounts checks how many replies have each status.
func mustCounts(t *testing.T, rs []*reply, want map[int]int) {
	t.Helper()
	got := map[int]int{}
	for _, r := range rs {
		got[r.status]++
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("statuses %v, want %v: %v", got, want, rs)
	}
}
