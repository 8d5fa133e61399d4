// Package passkeysflow runs the passkey flow suite (passkeys/passkeystest)
// on each framework, the passkey routes served by the framework module
// with core's (passkeys.New adds them to the Service's route table;
// e2e/internal/frameworks mounts the Service as an app does), over the
// memory store; and over each SQL database (sqlxstore's user.Passkeys
// part), each on one framework.
package passkeysflow

import (
	"os"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/e2e/internal/frameworks"
	"github.com/authkit-go/authkit/e2e/internal/sqltest"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

// start serves a Service on the named framework: the passkey routes pk
// added to it among its own.
func start(name string) func(t *testing.T, svc *auth.Service, pk *passkeys.Handler) string {
	return func(t *testing.T, svc *auth.Service, _ *passkeys.Handler) string {
		return frameworks.Serve(t, name, svc, nil, "")
	}
}

func TestPasskeyFlows(t *testing.T) {
	for _, name := range frameworks.Names {
		t.Run(name, func(t *testing.T) {
			passkeystest.Run(t, passkeystest.Harness{
				Start:    start(name),
				NewUsers: func(t *testing.T) user.Store { return store.NewMemory(store.MemoryConfig{}) },
			})
		})
	}
}

// TestPasskeyFlowsSQL runs the suite over sqlxstore on each database, each
// on one framework (the frameworks ran it on memory above, and the store
// is behind the Service whatever serves it): SQLite on gin, PostgreSQL on
// net/http, MySQL/MariaDB on fiber.
func TestPasskeyFlowsSQL(t *testing.T) {
	on := map[string]string{"sqlite": "gin", "postgres": "nethttp", "mysql": "fiber"}
	for _, d := range sqltest.Databases {
		t.Run(d.Name+"/"+on[d.Name], func(t *testing.T) {
			db := sqltest.Open(t, d.URL(t))
			passkeystest.Run(t, passkeystest.Harness{Start: start(on[d.Name]), NewUsers: db.Users})
		})
	}
}
