package socialtest

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
)

// calls is an auth.Observer that records the store calls, "Part.Op".
type calls struct {
	mu  sync.Mutex
	log []string
}

func (c *calls) StartFlow(ctx context.Context, _ auth.Flow) (context.Context, func(int)) {
	return ctx, func(int) {}
}

func (c *calls) StartStoreCall(ctx context.Context, part, op string) (context.Context, func(error)) {
	c.mu.Lock()
	c.log = append(c.log, part+"."+op)
	c.mu.Unlock()
	return ctx, func(error) {}
}

func (c *calls) Event(context.Context, auth.Event) {}

func (c *calls) seen(call string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.log, call)
}

// storeCallsObserved: with an auth.Config.Observer, the identity store's
// calls are reported as part "Identities" (as core reports its own store
// parts, so otelauth's spans and metrics cover them) and the begun
// sign-ins' as "SocialStates".
func storeCallsObserved(t *testing.T, h Harness) {
	rec := &calls{}
	e := newEnv(t, h, options{authoritative: all, core: func(c *auth.Config) { c.Observer = rec }})
	b := e.browser()
	wantRedirect(t, b.signIn(alice), http.StatusSeeOther, "/")
	b.list()
	for _, call := range []string{"SocialStates.Put", "SocialStates.Take", "Identities.IdentityBySubject", "Identities.AddIdentity", "Identities.ListIdentities"} {
		if !rec.seen(call) {
			t.Errorf("store call %s not observed; observed %v", call, rec.log)
		}
	}
}
