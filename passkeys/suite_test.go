package passkeys_test

import (
	"net/http"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

// TestFlows runs the passkey flow suite on net/http (core's routes on a
// ServeMux, as nethttpauth mounts them) over the memory store. The e2e
// module runs it on gin and fiber too (e2e/passkeysflow).
func TestFlows(t *testing.T) {
	passkeystest.Run(t, passkeystest.Harness{
		Start: func(t *testing.T, svc *auth.Service, pk *passkeys.Handler) string {
			mux := http.NewServeMux()
			for _, rt := range svc.Routes() {
				mux.HandleFunc(rt.Method+" "+rt.Pattern, func(w http.ResponseWriter, r *http.Request) {
					resp := svc.Handle(rt, auth.HTTPRequest(r, r.PathValue))
					resp.Write(w)
				})
			}
			mux.Handle(passkeys.Prefix, pk)
			mux.Handle(passkeys.Prefix+"/", pk)
			return authtest.Serve(t, mux)
		},
		NewUsers: func(t *testing.T) user.Store { return store.NewMemory(store.MemoryConfig{}) },
	})
}
