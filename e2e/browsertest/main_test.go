package browsertest

import (
	"os"
	"testing"
)

// TestMain stops the Chromiums the tests shared once they have run.
func TestMain(m *testing.M) {
	code := m.Run()
	CloseAll()
	os.Exit(code)
}
