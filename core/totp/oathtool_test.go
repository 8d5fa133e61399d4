package totp

import (
	"encoding/base32"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// requireTool returns the path of an external program the test needs. When
// the program is not on PATH the test is skipped, naming it, unless
// AUTHKIT_REQUIRE_SERVICES=1 (set by CI), which makes that a failure.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("AUTHKIT_REQUIRE_SERVICES") == "1" {
		t.Fatalf("%s is not on PATH (%v) and AUTHKIT_REQUIRE_SERVICES=1", name, err)
	}
	t.Skipf("%s is not on PATH (%v): skipping the cross-check; set AUTHKIT_REQUIRE_SERVICES=1 to fail instead", name, err)
	return ""
}

// TestCodeMatchesOathtool compares Code with oathtool (OATH Toolkit), an
// independent implementation, for random secrets, times and settings.
func TestCodeMatchesOathtool(t *testing.T) {
	oathtool := requireTool(t, "oathtool")
	rng := rand.New(rand.NewPCG(6238, 4226)) // fixed: failures reproduce
	for i := range 12 {
		raw := make([]byte, []int{10, 16, 20, 32}[i%4])
		for j := range raw {
			raw[j] = byte(rng.Uint32())
		}
		secret := strings.TrimRight(base32.StdEncoding.EncodeToString(raw), "=")
		digits := []int{6, 8}[i%2]
		period := []time.Duration{30 * time.Second, 60 * time.Second, 30 * time.Second}[i%3]
		// Any second from 1970 to 2100.
		at := time.Unix(rng.Int64N(4102444800), 0).UTC()

		tp := mustNew(t, Config{Digits: digits, Period: period})
		got := mustCode(t, tp, secret, at)
		out, err := exec.Command(oathtool, "--totp", "-b",
			"-d", []string{"6", "8"}[i%2],
			"-s", []string{"30s", "60s", "30s"}[i%3],
			"--now", at.Format("2006-01-02 15:04:05 UTC"),
			secret).CombinedOutput()
		if err != nil {
			t.Fatalf("oathtool: %v: %s", err, out)
		}
		if want := strings.TrimSpace(string(out)); got != want {
			t.Errorf("secret %s, %d digits, period %v, at %v: Code() = %s, oathtool says %s",
				secret, digits, period, at, got, want)
		}
	}
}
