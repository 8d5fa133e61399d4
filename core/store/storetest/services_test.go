package storetest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeEnv is a service variable of these tests only, with a local address
// the test chooses.
const fakeEnv = "AUTHKIT_TEST_STORETEST_FAKE"

// useLocal makes url the local address of fakeEnv for t.
func useLocal(t *testing.T, url string) {
	localURLs[fakeEnv] = url
	local.Delete(fakeEnv)
	t.Cleanup(func() {
		delete(localURLs, fakeEnv)
		local.Delete(fakeEnv)
	})
}

// serviceURLIn calls ServiceURL in a subtest and returns its result and
// whether the subtest was skipped.
func serviceURLIn(t *testing.T) (url string, skipped bool) {
	t.Run("lookup", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		url = ServiceURL(t, fakeEnv)
	})
	return url, skipped
}

func TestServiceURL(t *testing.T) {
	t.Setenv(EnvRequireServices, "")
	t.Setenv(EnvSkipped, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	listening := "redis://" + ln.Addr().String() + "/0"

	t.Run("the variable wins", func(t *testing.T) {
		useLocal(t, listening)
		t.Setenv(fakeEnv, "redis://elsewhere:6379/1")
		if got, skipped := serviceURLIn(t); skipped || got != "redis://elsewhere:6379/1" {
			t.Errorf("ServiceURL = %q, skipped %v; want the variable's URL", got, skipped)
		}
	})
	t.Run("unset, a server answers at the local address", func(t *testing.T) {
		useLocal(t, listening)
		t.Setenv(fakeEnv, "")
		if got, skipped := serviceURLIn(t); skipped || got != listening {
			t.Errorf("ServiceURL = %q, skipped %v; want %q", got, skipped, listening)
		}
	})
	t.Run("unset, nothing answers: skipped and written down", func(t *testing.T) {
		closed, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		useLocal(t, "redis://"+closed.Addr().String()+"/0")
		closed.Close()
		t.Setenv(fakeEnv, "")
		log := filepath.Join(t.TempDir(), "skipped")
		t.Setenv(EnvSkipped, log)
		if _, skipped := serviceURLIn(t); !skipped {
			t.Fatal("not skipped")
		}
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		wd, _ := os.Getwd()
		if want := fakeEnv + "\t" + wd + "\t" + t.Name() + "/lookup\n"; string(b) != want {
			t.Errorf("%s holds %q, want %q", EnvSkipped, b, want)
		}
	})
	t.Run("off: skipped although a server answers", func(t *testing.T) {
		useLocal(t, listening)
		t.Setenv(fakeEnv, "off")
		if _, skipped := serviceURLIn(t); !skipped {
			t.Error("not skipped")
		}
	})
}

// TestSkipMissingRequired: under AUTHKIT_REQUIRE_SERVICES=1 a missing
// service fails the test, naming it.
func TestSkipMissingRequired(t *testing.T) {
	t.Setenv(EnvRequireServices, "1")
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		SkipMissing(rec, "redis-server", "redis-server is not installed")
	}()
	<-done
	if !rec.failed || rec.skipped || !strings.Contains(rec.msg, "redis-server is not installed") || !strings.Contains(rec.msg, EnvRequireServices+"=1") {
		t.Errorf("failed %v, skipped %v, message %q; want a failure naming the service and %s", rec.failed, rec.skipped, rec.msg, EnvRequireServices)
	}
}

// recorder is a testing.TB that records Fatalf and Skip and ends the
// goroutine as they do.
type recorder struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Skip(args ...any) {
	r.skipped = true
	runtime.Goexit()
}
