package socialflow

import (
	"slices"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/e2e/internal/frameworks"
	"github.com/authkit-go/authkit/e2e/internal/sqltest"
	"github.com/authkit-go/authkit/social/socialtest"
)

// TestSocialFlowsSQL runs the social flow suite over each SQL store
// (sqlxstore on SQLite, PostgreSQL and MySQL/MariaDB): the accounts and
// identities in the database's tables, the begun sign-ins in its
// challenges table (sqlxstore's OneTime, the store several instances
// share). A store's code is the same whatever framework serves it, so
// one framework (net/http) is enough here; TestSocialFlows runs the
// frameworks over memory. A server that is not there skips its database
// (AUTHKIT_REQUIRE_SERVICES=1 fails it).
func TestSocialFlowsSQL(t *testing.T) {
	runSQL(t, sqltest.Open)
}

// TestSocialFlowsAppTable runs the suite over sqlxstore mapped onto an
// app's own users table (sqltest.OpenApp: database-assigned BIGINT ids,
// authkit's state in a side table), where identities refer to the app's
// ids, on PostgreSQL: each dialect's SQL of the mapped identities is
// proven by sqlxstore's own conformance run (TestConformanceMapped), so
// one database shows the flows over the mapping.
func TestSocialFlowsAppTable(t *testing.T) {
	runSQL(t, sqltest.OpenApp, "postgres")
}

// runSQL runs the suite over each database of sqltest.Databases, or the
// ones named.
func runSQL(t *testing.T, open func(t *testing.T, url string) *sqltest.DB, only ...string) {
	for _, db := range sqltest.Databases {
		if len(only) > 0 && !slices.Contains(only, db.Name) {
			continue
		}
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			s := open(t, db.URL(t))
			socialtest.Run(t, socialtest.Harness{
				Start:     func(t *testing.T, svc *auth.Service) string { return frameworks.Serve(t, "nethttp", svc, nil, "") },
				NewUsers:  s.Users,
				NewStates: func(t *testing.T) onetime.Store { return s.For(t).OneTime() },
			})
		})
	}
}
