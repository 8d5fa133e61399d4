package main

import (
	"testing"

	"github.com/authkit-go/authkit/examples/internal/servertest"
)

// TestServer runs the real binary on its defaults and checks the runtime
// contract every example server keeps (servertest.CheckContract).
func TestServer(t *testing.T) {
	servertest.Start(t, ".").CheckContract(t, "fiber")
}
