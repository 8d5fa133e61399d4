// Package socialflow runs the social sign-in flow suite
// (social/socialtest) on each framework: the social routes (social.New
// adds them to the Service's route table) served by the framework module
// with core's, as e2e/internal/frameworks mounts the Service for an app,
// against the real OpenID provider the suite runs.
package socialflow

import (
	"os"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/e2e/internal/frameworks"
	"github.com/authkit-go/authkit/social/socialtest"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

func TestSocialFlows(t *testing.T) {
	for _, name := range frameworks.Names {
		t.Run(name, func(t *testing.T) {
			socialtest.Run(t, socialtest.Harness{
				Start: func(t *testing.T, svc *auth.Service) string { return frameworks.Serve(t, name, svc, nil, "") },
			})
		})
	}
}
