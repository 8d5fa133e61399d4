package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/secretbox"
)

// runCLI runs the command line args and returns the exit code and outputs.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// usage is the top-level usage text.
func usage() string {
	var b strings.Builder
	printUsage(&b)
	return b.String()
}

func TestUsageListsCommands(t *testing.T) {
	u := usage()
	for _, line := range []string{
		"\tauthkit <command> [arguments]\n",
		"\tencryption-key  print a new key for ENCRYPTION_KEY\n",
		"\tsession-secret  print a new secret for SESSION_SECRET\n",
		"\thelp            print help about a command\n",
	} {
		if !strings.Contains(u, line) {
			t.Errorf("usage does not contain %q:\n%s", line, u)
		}
	}
}

func TestRun(t *testing.T) {
	cmdHelp := func(c *command) string {
		var b strings.Builder
		c.printHelp(&b)
		return b.String()
	}
	for _, tc := range []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"no arguments", nil, 2, "", usage()},
		{"help", []string{"help"}, 0, usage(), ""},
		{"-h", []string{"-h"}, 0, usage(), ""},
		{"-help", []string{"-help"}, 0, usage(), ""},
		{"--help", []string{"--help"}, 0, usage(), ""},
		{"help command", []string{"help", "encryption-key"}, 0, cmdHelp(encryptionKeyCmd), ""},
		{"help session-secret", []string{"help", "session-secret"}, 0, cmdHelp(sessionSecretCmd), ""},
		{"help help", []string{"help", "help"}, 0, usage(), ""},
		{"help unknown", []string{"help", "nope"}, 2, "", "authkit help: unknown command \"nope\"\n\n" + usage()},
		{"help two", []string{"help", "a", "b"}, 2, "", "authkit help: too many arguments\nusage: authkit help [command]\n"},
		{"unknown command", []string{"x"}, 2, "", "authkit: unknown command \"x\"\n\n" + usage()},
		{"empty command", []string{""}, 2, "", "authkit: unknown command \"\"\n\n" + usage()},
		{"flag as command", []string{"-v"}, 2, "", "authkit: unknown command \"-v\"\n\n" + usage()},
		{"command -h", []string{"encryption-key", "-h"}, 0, cmdHelp(encryptionKeyCmd), ""},
		{"command --help", []string{"session-secret", "--help"}, 0, cmdHelp(sessionSecretCmd), ""},
		{"extra argument", []string{"encryption-key", "extra"}, 2, "",
			"authkit encryption-key: unexpected argument \"extra\"\nusage: authkit encryption-key\nRun \"authkit help encryption-key\" for more.\n"},
		{"extra arguments", []string{"session-secret", "a", "b"}, 2, "",
			"authkit session-secret: unexpected argument \"a\"\nusage: authkit session-secret\nRun \"authkit help session-secret\" for more.\n"},
		{"unknown flag", []string{"encryption-key", "-n"}, 2, "",
			"authkit encryption-key: flag provided but not defined: -n\nusage: authkit encryption-key\nRun \"authkit help encryption-key\" for more.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code = %d, want %d", code, tc.wantCode)
			}
			if stdout != tc.wantStdout {
				t.Errorf("stdout = %q, want %q", stdout, tc.wantStdout)
			}
			if stderr != tc.wantStderr {
				t.Errorf("stderr = %q, want %q", stderr, tc.wantStderr)
			}
		})
	}
}

// printedLine runs the CLI's command cmd and returns the line of n
// characters it prints, failing the test unless it exits 0 with nothing on
// stderr and just that line on stdout.
func printedLine(t *testing.T, cmd string, n int) string {
	t.Helper()
	code, stdout, stderr := runCLI(cmd)
	if code != 0 || stderr != "" {
		t.Fatalf("exit code %d, stderr %q; want 0 and nothing", code, stderr)
	}
	line, ok := strings.CutSuffix(stdout, "\n")
	if !ok || strings.Contains(line, "\n") || len(line) != n {
		t.Fatalf("stdout = %q, want one %d-character line", stdout, n)
	}
	return line
}

func TestEncryptionKey(t *testing.T) {
	var keys []string
	for range 2 {
		key := printedLine(t, "encryption-key", 47)
		ring, err := secretbox.ParseKeyring(key)
		if err != nil {
			t.Fatalf("the printed key does not parse: %v", err)
		}
		ct, err := ring.EncryptString("secret", "ad")
		if err != nil {
			t.Fatal(err)
		}
		if pt, err := ring.DecryptString(ct, "ad"); err != nil || pt != "secret" {
			t.Fatalf("round trip with the printed key = %q, %v", pt, err)
		}
		keys = append(keys, key)
	}
	if keys[0] == keys[1] {
		t.Error("two runs printed the same key")
	}
}

func TestSessionSecret(t *testing.T) {
	var secrets []string
	for range 2 {
		secret := printedLine(t, "session-secret", 43)
		raw, err := base64.RawURLEncoding.Strict().DecodeString(secret)
		if err != nil || len(raw) != 32 {
			t.Fatalf("the secret decodes to %d bytes, %v; want 32 bytes of unpadded base64url", len(raw), err)
		}
		secrets = append(secrets, secret)
	}
	if secrets[0] == secrets[1] {
		t.Error("two runs printed the same secret")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestWriteFailure(t *testing.T) {
	for _, name := range []string{"encryption-key", "session-secret"} {
		var stderr bytes.Buffer
		if code := run([]string{name}, failingWriter{}, &stderr); code != 1 {
			t.Errorf("%s to a broken stdout: exit code = %d, want 1", name, code)
		}
		if want := "authkit " + name + ": broken pipe\n"; stderr.String() != want {
			t.Errorf("%s to a broken stdout: stderr = %q, want %q", name, stderr.String(), want)
		}
	}
}

// TestBinary builds the real command and runs it, to check what the tests
// above cannot: main's wiring of os.Args, the streams and the exit code.
func TestBinary(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH; cannot build the binary")
	}
	bin := filepath.Join(t.TempDir(), "authkit")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	exe := func(args ...string) (code int, stdout, stderr string) {
		t.Helper()
		var out, errOut bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exitErr *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exitErr):
			code = exitErr.ExitCode()
		default:
			t.Fatalf("running %s: %v", bin, err)
		}
		return code, out.String(), errOut.String()
	}

	code, stdout, stderr := exe("encryption-key")
	if code != 0 || stderr != "" {
		t.Errorf("encryption-key: exit code %d, stderr %q; want 0 and nothing", code, stderr)
	}
	if _, err := secretbox.ParseKeyring(strings.TrimSuffix(stdout, "\n")); err != nil || !strings.HasSuffix(stdout, "\n") {
		t.Errorf("encryption-key printed %d bytes that do not parse as a key line: %v", len(stdout), err)
	}

	code, stdout, stderr = exe("frobnicate")
	if code != 2 || stdout != "" {
		t.Errorf("unknown command: exit code %d, stdout %q; want 2 and nothing", code, stdout)
	}
	if want := "authkit: unknown command \"frobnicate\"\n\n" + usage(); stderr != want {
		t.Errorf("unknown command: stderr = %q, want %q", stderr, want)
	}
}
