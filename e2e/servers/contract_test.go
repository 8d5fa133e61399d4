// Package servers builds each example server of the examples module and
// runs it as a real process, as `make run` does: the three framework
// servers keep the runtime contract (servertest.CheckContract), and
// customstore serves an app's existing accounts table.
package servers

import (
	"testing"

	"github.com/authkit-go/authkit/e2e/servertest"
)

// TestNetHTTP runs examples/nethttp on its defaults and checks the runtime
// contract every example server keeps (servertest.CheckContract).
func TestNetHTTP(t *testing.T) {
	servertest.Start(t, "nethttp").CheckContract(t, "net/http")
}

// TestGin runs examples/gin on its defaults and checks the runtime
// contract.
func TestGin(t *testing.T) {
	servertest.Start(t, "gin").CheckContract(t, "gin")
}

// TestFiber runs examples/fiber on its defaults and checks the runtime
// contract.
func TestFiber(t *testing.T) {
	servertest.Start(t, "fiber").CheckContract(t, "fiber")
}
