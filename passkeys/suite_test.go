package passkeys_test

import (
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

// TestFlows runs the passkey flow suite on net/http (the Service's routes,
// the passkey routes among them, on a ServeMux, as nethttpauth mounts them) over the memory store. The e2e
// module runs it on gin and fiber too (e2e/passkeysflow).
func TestFlows(t *testing.T) {
	passkeystest.Run(t, passkeystest.Harness{
		Start: func(t *testing.T, svc *auth.Service, pk *passkeys.Handler) string {
			return authtest.Serve(t, serve(svc))
		},
		NewUsers: func(t *testing.T) user.Store { return store.NewMemory(store.MemoryConfig{}) },
	})
}
