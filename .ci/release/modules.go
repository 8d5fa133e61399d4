package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// repoPath is the module path of the repository's root; every authkit
// module's path begins with it.
const repoPath = "github.com/authkit-go/authkit"

// installable are the modules a user builds with `go install` or `go run
// pkg@version`. The go command refuses a module with replace directives
// there, so their go.mod carries none: in the repository their siblings
// come from go.work.
var installable = []string{"cmd/authkit"}

// Module is one authkit module of the repository.
type Module struct {
	Dir  string // relative to the repository root, slash-separated: "adapters/sqlxstore"
	Path string // module path: "github.com/authkit-go/authkit/adapters/sqlxstore"
	File *modfile.File
}

// Installable reports whether m is built by go install (see installable).
func (m Module) Installable() bool { return slices.Contains(installable, m.Dir) }

// Tag returns the git tag of m at version: "adapters/sqlxstore/v0.1.0".
func (m Module) Tag(version string) string { return m.Dir + "/" + version }

// load returns the repository's top directory and its modules.
func load() (string, []Module, error) {
	root, err := repoRoot()
	if err != nil {
		return "", nil, err
	}
	mods, err := modules(root)
	return root, mods, err
}

// repoRoot returns the repository's top directory.
func repoRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("finding the repository: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// modules returns the authkit modules under root: every go.mod outside
// hidden directories, testdata and bench/ (the peer comparisons, which are
// never published), in path order.
func modules(root string) ([]Module, error) {
	var mods []Module
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || rel == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "go.mod" {
			return nil
		}
		f, err := parseFile(p, modfile.Parse)
		if err != nil {
			return err
		}
		dir := path.Dir(rel)
		if f.Module == nil || f.Module.Mod.Path != repoPath+"/"+dir {
			return fmt.Errorf("%s: module path must be %s/%s", rel, repoPath, dir)
		}
		mods = append(mods, Module{Dir: dir, Path: f.Module.Mod.Path, File: f})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the modules: %w", err)
	}
	if len(mods) == 0 {
		return nil, errors.New("no modules found")
	}
	slices.SortFunc(mods, func(a, b Module) int { return strings.Compare(a.Dir, b.Dir) })
	return mods, nil
}

// releaseVersion returns the one version at which the modules require each
// other: the version being released.
func releaseVersion(mods []Module) (string, error) {
	version := ""
	for _, m := range mods {
		for _, r := range m.File.Require {
			if !strings.HasPrefix(r.Mod.Path, repoPath+"/") {
				continue
			}
			if version == "" {
				version = r.Mod.Version
			} else if r.Mod.Version != version {
				return "", fmt.Errorf("%s requires %s %s, others %s: the modules move together", m.Dir, r.Mod.Path, r.Mod.Version, version)
			}
		}
	}
	if version == "" {
		return "", errors.New("no module requires another")
	}
	return version, nil
}

// files returns the files of module m that a release holds: those git
// tracks or would track (not ignored), still on disk, outside nested
// modules, slash-separated and relative to the repository root.
func files(root string, m Module, all []Module) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", m.Dir)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the files of %s: %w: %s", m.Dir, err, stderr.String())
	}
	var list []string
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" || nested(f, m, all) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, f)); errors.Is(err, fs.ErrNotExist) {
			continue // deleted, not yet committed
		}
		list = append(list, f)
	}
	return list, nil
}

// nested reports whether file belongs to a module nested inside m.
func nested(file string, m Module, all []Module) bool {
	for _, o := range all {
		if o.Dir != m.Dir && strings.HasPrefix(o.Dir, m.Dir+"/") && strings.HasPrefix(file, o.Dir+"/") {
			return true
		}
	}
	return false
}

// parseFile reads the file at name and parses it with parse: modfile.Parse
// for a go.mod, modfile.ParseWork for a go.work.
func parseFile[F any](name string, parse func(string, []byte, modfile.VersionFixer) (F, error)) (F, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		var none F
		return none, err
	}
	return parse(name, data, nil)
}
