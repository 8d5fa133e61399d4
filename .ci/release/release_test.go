package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// TestRepository: the repository's go.mod files follow every rule of the
// package doc.
func TestRepository(t *testing.T) {
	root, mods, err := load()
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range check(root, mods) {
		t.Error(err)
	}
	for _, want := range append([]string{"core", "nethttpauth", "ginauth", "fiberauth", "pages", "passkeys", "adapters/sqlxstore", "adapters/redisstore"}, installable...) {
		found := false
		for _, m := range mods {
			found = found || m.Dir == want
		}
		if !found {
			t.Errorf("module %s not found", want)
		}
	}
}

// TestCheck: each rule, broken on purpose, is reported.
func TestCheck(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "LICENSE"), []byte("license\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mod := func(dir, text string) Module {
		t.Helper()
		f, err := modfile.Parse(dir+"/go.mod", []byte(text), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, "LICENSE"), []byte("license\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return Module{Dir: dir, Path: repoPath + "/" + dir, File: f}
	}
	core := mod("core", "module "+repoPath+"/core\n\ngo 1.25.0\n")
	good := []Module{
		core,
		mod("ginauth", "module "+repoPath+"/ginauth\n\ngo 1.25.0\n\nrequire "+repoPath+"/core v0.1.0\n\nreplace "+repoPath+"/core => ../core\n"),
		mod("cmd/authkit", "module "+repoPath+"/cmd/authkit\n\ngo 1.25.0\n\nrequire "+repoPath+"/core v0.1.0\n"),
	}
	if errs := check(root, good); len(errs) != 0 {
		t.Fatalf("a good set of modules: %v", errs)
	}
	for _, tt := range []struct {
		name, dir, gomod, want string
	}{
		{"library without replace", "ginauth", "require " + repoPath + "/core v0.1.0\n", "without replacing it"},
		{"replace to the wrong directory", "ginauth", "require " + repoPath + "/core v0.1.0\n\nreplace " + repoPath + "/core => ../../core\n", "want => ../core"},
		{"replace of a third-party module", "ginauth", "require " + repoPath + "/core v0.1.0\n\nreplace " + repoPath + "/core => ../core\n\nreplace golang.org/x/text => golang.org/x/text v0.1.0\n", "only sibling modules"},
		{"installable with replace", "cmd/authkit", "require " + repoPath + "/core v0.1.0\n\nreplace " + repoPath + "/core => ../../core\n", "go install refuses"},
		{"installable with exclude", "cmd/authkit", "require " + repoPath + "/core v0.1.0\n\nexclude golang.org/x/text v0.1.0\n", "go install refuses"},
		{"two versions", "ginauth", "require " + repoPath + "/core v0.2.0\n\nreplace " + repoPath + "/core => ../core\n", "move together"},
		{"a pre-release", "ginauth", "require " + repoPath + "/core v0.1.0-rc.1\n\nreplace " + repoPath + "/core => ../core\n", "not a plain"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mods := []Module{core, good[1], good[2]}
			for i, m := range mods {
				if m.Dir == tt.dir {
					mods[i] = mod(tt.dir, "module "+repoPath+"/"+tt.dir+"\n\ngo 1.25.0\n\n"+tt.gomod)
				}
			}
			if tt.name == "a pre-release" {
				mods[2] = mod("cmd/authkit", "module "+repoPath+"/cmd/authkit\n\ngo 1.25.0\n\nrequire "+repoPath+"/core v0.1.0-rc.1\n")
			}
			errs := check(root, mods)
			joined := ""
			for _, err := range errs {
				joined += err.Error() + "\n"
			}
			if !strings.Contains(joined, tt.want) {
				t.Fatalf("check reported %q, want an error containing %q", joined, tt.want)
			}
		})
	}
	t.Run("module without the LICENSE", func(t *testing.T) {
		if err := os.Remove(filepath.Join(root, "ginauth", "LICENSE")); err != nil {
			t.Fatal(err)
		}
		errs := check(root, good)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "ginauth/LICENSE") {
			t.Fatalf("check reported %v, want ginauth/LICENSE missing", errs)
		}
	})
}

func TestRelDir(t *testing.T) {
	for _, tt := range []struct{ from, to, want string }{
		{"ginauth", "core", "../core"},
		{"adapters/sqlxstore", "store", "../../store"},
		{"examples", "adapters/redisstore", "../adapters/redisstore"},
		{"cmd/authkit", "core", "../../core"},
		{"core/auth", "core", ".."},
	} {
		if got := relDir(tt.from, tt.to); got != tt.want {
			t.Errorf("relDir(%s, %s) = %s, want %s", tt.from, tt.to, got, tt.want)
		}
	}
}

func TestWithoutAuthkit(t *testing.T) {
	sum := "github.com/authkit-go/authkit/core v0.1.0 h1:x=\n" +
		"github.com/jmoiron/sqlx v1.4.0 h1:y=\n" +
		"github.com/authkit-go/authkit/core v0.1.0/go.mod h1:z=\n"
	if got := string(withoutAuthkit([]byte(sum))); got != "github.com/jmoiron/sqlx v1.4.0 h1:y=\n" {
		t.Fatalf("withoutAuthkit = %q", got)
	}
}

func TestLineDiff(t *testing.T) {
	want := "a v1/go.mod h1:x=\nb v1/go.mod h1:y=\n"
	got := "b v1/go.mod h1:y=\nc v1/go.mod h1:z=\n"
	if d := lineDiff([]byte(want), []byte(got)); d != "- a v1/go.mod h1:x=\n+ c v1/go.mod h1:z=\n" {
		t.Fatalf("lineDiff = %q", d)
	}
	if d := lineDiff(nil, []byte(got)); d != "+ b v1/go.mod h1:y=\n+ c v1/go.mod h1:z=\n" {
		t.Fatalf("lineDiff from nothing = %q", d)
	}
}
