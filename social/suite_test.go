package social_test

import (
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/nethttpauth"
	"github.com/authkit-go/authkit/social/socialtest"
)

// TestFlows runs the social flow suite on net/http (nethttpauth serving the
// Service's routes, the social module's among them) over the memory
// store. The e2e module runs it on gin and fiber too (e2e/socialflow).
func TestFlows(t *testing.T) {
	socialtest.Run(t, socialtest.Harness{
		Start: func(t *testing.T, svc *auth.Service) string {
			return authtest.Serve(t, nethttpauth.Handler(svc))
		},
	})
}
