// Command release checks that authkit's modules can be released and used
// the way Go users use modules, and makes a module proxy of them:
//
//	go run . check             the go.mod rules below; exit 1 naming each broken one
//	go run . proxy -out DIR    a file:// module proxy of every module at the release version
//	go run . standalone [DIR...] every module (or those named) with GOWORK=off: its
//	                           packages and tests load from its own go.mod and go.sum,
//	                           at the dependency versions go.work gives them
//	go run . tidy              fails when go mod tidy would change a go.mod or go.sum,
//	                           or when go.work.sum is not what the workspace needs
//	go run . worksum [-w]      the go.work.sum check alone; -w rewrites go.work.sum
//
// Run it from anywhere in the repository with GOWORK=off (it is its own
// module, outside go.work; make release-check, test-standalone and
// tidy-check do). The rules:
//
//   - the modules require each other at one version, the release version
//     (v0.1.0), tagged per module as Go's multi-module repositories expect
//     (core/v0.1.0, adapters/sqlxstore/v0.1.0, ...);
//   - a library module replaces each sibling it requires by the sibling's
//     directory, so that its tests with GOWORK=off build against the code
//     next to it; the go command ignores a dependency's replace
//     directives, so these never reach a consumer. It replaces nothing
//     else;
//   - every module holds a copy of the repository's LICENSE: a module zip
//     holds only its own directory, and pkg.go.dev shows no documentation
//     for a module without a license;
//   - a module users install (cmd/authkit) carries no replace or
//     exclude directive, which `go install pkg@version` refuses; in the
//     repository its siblings come from go.work, and with GOWORK=off from
//     a module proxy made from the repository (standalone, tidy). Its
//     go.sum therefore holds no line for authkit's own modules: go install
//     checks those against the checksum database.
//
// The quick-start test (quickstart_test.go) builds the programs of the
// README's "Into your app in ten lines" through such a proxy, outside the
// repository, and drives their flows over HTTP.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/mod/semver"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: release check | proxy -out DIR | standalone | tidy | worksum [-w]")
	}
	root, mods, err := load()
	if err != nil {
		return err
	}
	switch args[0] {
	case "check":
		if errs := check(root, mods); len(errs) > 0 {
			return errors.Join(errs...)
		}
		v, _ := releaseVersion(mods)
		fmt.Printf("%d modules, release %s: go.mod files fit for release\n", len(mods), v)
		return nil
	case "proxy":
		fl := flag.NewFlagSet("proxy", flag.ContinueOnError)
		out := fl.String("out", "", "directory to write the proxy to")
		if err := fl.Parse(args[1:]); err != nil {
			return err
		}
		if *out == "" {
			return errors.New("proxy: -out is required")
		}
		v, err := releaseVersion(mods)
		if err != nil {
			return err
		}
		abs, err := filepath.Abs(*out)
		if err != nil {
			return err
		}
		if err := buildProxy(root, abs, v, mods); err != nil {
			return err
		}
		fmt.Printf("GOPROXY=file://%s (%d modules at %s)\n", filepath.ToSlash(abs), len(mods), v)
		return nil
	case "standalone":
		return forEach(root, mods, args[1:], standalone)
	case "tidy":
		if err := forEach(root, mods, nil, func(m Module, env *proxyEnv) error { return env.tidy(m) }); err != nil {
			return err
		}
		fmt.Println("== go.work.sum")
		return workSum(root, false)
	case "worksum":
		fl := flag.NewFlagSet("worksum", flag.ContinueOnError)
		write := fl.Bool("w", false, "rewrite go.work.sum instead of failing")
		if err := fl.Parse(args[1:]); err != nil {
			return err
		}
		return workSum(root, *write)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// standalone checks that m, with GOWORK=off, is the module whose tests
// make test ran in the workspace: go list loads every package m's packages
// and tests import, from m's own go.mod and go.sum (a requirement or a
// checksum missing there fails it), and every module they come from
// resolves to the version it has in go.work (else the workspace's test run
// proved other code than a user of m builds). Nothing is compiled again:
// same code at the same versions is what make lint vetted and make test and
// make test-e2e built and ran, race detector on.
func standalone(m Module, env *proxyEnv) error {
	return sameVersions(m, env)
}

// depsFormat prints the module of every package go list names, authkit's
// own modules left out.
const depsFormat = `{{with .Module}}{{if not .Main}}{{.Path}} {{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}{{end}}{{end}}`

// sameVersions fails, naming each, when a module that m's packages or
// tests use resolves to another version with GOWORK=off than in go.work.
func sameVersions(m Module, env *proxyEnv) error {
	list := func(workspace bool) (map[string]string, error) {
		out, err := env.goOutput(m, workspace, "list", "-deps", "-test", "-f", depsFormat, "./...")
		if err != nil {
			return nil, err
		}
		vs := map[string]string{}
		for _, line := range strings.Split(string(out), "\n") {
			path, version, ok := strings.Cut(line, " ")
			if ok && path != repoPath && !strings.HasPrefix(path, repoPath+"/") {
				vs[path] = version
			}
		}
		return vs, nil
	}
	work, err := list(true)
	if err != nil {
		return fmt.Errorf("go list in the workspace: %w", err)
	}
	alone, err := list(false)
	if err != nil {
		return fmt.Errorf("go list with GOWORK=off: %w", err)
	}
	var errs []error
	for _, path := range slices.Sorted(maps.Keys(work)) {
		if alone[path] != work[path] {
			errs = append(errs, fmt.Errorf("%s is %s with GOWORK=off, %s in go.work, where the tests ran: go get %s@%s in %s, then go mod tidy",
				path, or(alone[path], "missing"), work[path], path, work[path], m.Dir))
		}
	}
	return errors.Join(errs...)
}

// or returns s, or alt when s is empty.
func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// check returns every broken rule of the package doc.
func check(root string, mods []Module) []error {
	var errs []error
	license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		errs = append(errs, fmt.Errorf("the repository has no LICENSE: %w", err))
	}
	for _, m := range mods {
		if got, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.Dir), "LICENSE")); license != nil && !bytes.Equal(got, license) {
			errs = append(errs, fmt.Errorf("%s/LICENSE: missing or not the repository's LICENSE", m.Dir))
		}
	}
	version, err := releaseVersion(mods)
	if err != nil {
		return []error{err}
	}
	if !semver.IsValid(version) || semver.Canonical(version) != version || semver.Prerelease(version) != "" {
		errs = append(errs, fmt.Errorf("release version %q is not a plain vX.Y.Z", version))
	}
	dirs := map[string]string{} // module path -> dir
	for _, m := range mods {
		dirs[m.Path] = m.Dir
	}
	for _, m := range mods {
		f := m.File
		if f.Go == nil || f.Go.Version != "1.25.0" {
			errs = append(errs, fmt.Errorf("%s/go.mod: want go 1.25.0", m.Dir))
		}
		if m.Installable() {
			for _, r := range f.Replace {
				errs = append(errs, fmt.Errorf("%s/go.mod: replace %s: go install refuses a module with replace directives", m.Dir, r.Old.Path))
			}
			for _, x := range f.Exclude {
				errs = append(errs, fmt.Errorf("%s/go.mod: exclude %s: go install refuses a module with exclude directives", m.Dir, x.Mod.Path))
			}
			continue
		}
		replaced := map[string]bool{}
		for _, r := range f.Replace {
			dir, ok := dirs[r.Old.Path]
			want := relDir(m.Dir, dir)
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("%s/go.mod: replace %s: only sibling modules are replaced (a consumer would not see it)", m.Dir, r.Old.Path))
			case r.Old.Version != "" || r.New.Version != "" || path.Clean(r.New.Path) != want:
				errs = append(errs, fmt.Errorf("%s/go.mod: replace %s => %s %s, want => %s", m.Dir, r.Old.Path, r.New.Path, r.New.Version, want))
			}
			replaced[r.Old.Path] = true
		}
		for _, r := range f.Require {
			if _, sibling := dirs[r.Mod.Path]; sibling && !replaced[r.Mod.Path] {
				errs = append(errs, fmt.Errorf("%s/go.mod: requires %s without replacing it by its directory", m.Dir, r.Mod.Path))
			}
		}
	}
	return errs
}

// relDir returns the path from module directory from to module directory
// to, as a replace directive writes it: "../core", "../../store".
func relDir(from, to string) string {
	f, t := strings.Split(from, "/"), strings.Split(to, "/")
	i := 0
	for i < len(f) && i < len(t) && f[i] == t[i] {
		i++
	}
	return path.Clean(strings.Repeat("../", len(f)-i) + strings.Join(t[i:], "/"))
}

// proxyEnv runs the go command on a module with GOWORK=off, its siblings
// from a module proxy of the repository when the module does not replace
// them, in a module cache of its own, so that a version built earlier from
// other code is never reused.
type proxyEnv struct {
	root string
	tmp  string
	env  []string
	out  io.Writer // the go commands' output; forEach gives each module a buffer
}

// forEach calls do for every module, or for those whose directories only
// names, with the proxy of all of them.
func forEach(root string, mods []Module, only []string, do func(Module, *proxyEnv) error) error {
	tmp, err := os.MkdirTemp("", "authkit-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	version, err := releaseVersion(mods)
	if err != nil {
		return err
	}
	proxy := filepath.Join(tmp, "proxy")
	if err := buildProxy(root, proxy, version, mods); err != nil {
		return err
	}
	env, err := goEnv(proxy, filepath.Join(tmp, "modcache"))
	if err != nil {
		return err
	}
	// The modules side by side, as many at once as the machine has cores
	// (each go command is mostly one core's work: loading, type-checking);
	// their module cache is shared, the go command locks it. Each module's
	// output is printed whole, in the modules' order.
	type result struct {
		out bytes.Buffer
		err error
	}
	var run []Module
	for _, m := range mods {
		if len(only) == 0 || slices.Contains(only, m.Dir) {
			run = append(run, m)
		}
	}
	results := make([]result, len(run))
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i, m := range run {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			e := &proxyEnv{root: root, tmp: tmp, env: env, out: &results[i].out}
			results[i].err = do(m, e)
		})
	}
	wg.Wait()
	var failed []string
	for i, m := range run {
		fmt.Printf("== %s\n", m.Dir)
		_, _ = os.Stdout.Write(results[i].out.Bytes())
		if err := results[i].err; err != nil {
			fmt.Fprintf(os.Stderr, "!! %s: %v\n", m.Dir, err)
			failed = append(failed, m.Dir)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("failed: %s", strings.Join(failed, " "))
	}
	return nil
}

// goEnv returns the environment of a go command that resolves authkit's
// modules from the file proxy at proxy (then the module cache this
// machine already has, then the usual proxy), with a module cache of its
// own at modcache.
func goEnv(proxy, modcache string) ([]string, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("go env: unexpected output %q", out)
	}
	chain := "file://" + filepath.ToSlash(proxy)
	if lines[0] != "" {
		chain += ",file://" + filepath.ToSlash(filepath.Join(lines[0], "cache", "download"))
	}
	if lines[1] != "" && lines[1] != "off" {
		chain += "," + lines[1]
	}
	return append(os.Environ(),
		"GOWORK=off",
		"GOPROXY="+chain,
		"GONOSUMDB="+repoPath,
		"GOMODCACHE="+modcache,
		"GOFLAGS=-modcacherw -trimpath",
	), nil
}

// goOutput runs the go command in m's directory and returns its standard
// output: in the workspace, or with GOWORK=off, where a module that does
// not replace its siblings gets them from the proxy, through a copy of its
// go.mod and go.sum that the go command may complete (-modfile, -mod=mod).
func (e *proxyEnv) goOutput(m Module, workspace bool, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join(e.root, filepath.FromSlash(m.Dir))
	switch {
	case workspace:
		cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(e.root, "go.work"))
	case m.Installable():
		modf, err := e.copyModFile(m)
		if err != nil {
			return nil, err
		}
		cmd.Env = append(e.env, "GOFLAGS=-modcacherw -mod=mod -modfile="+modf)
	default:
		cmd.Env = e.envFor(m)
	}
	cmd.Stderr = e.out
	return cmd.Output()
}

// envFor returns the environment of the go command on m: the proxy's for
// an installable module, else GOWORK=off alone (a library module's
// replace directives find its siblings, and the usual module cache its
// other dependencies).
func (e *proxyEnv) envFor(m Module) []string {
	if m.Installable() {
		return e.env
	}
	return append(os.Environ(), "GOWORK=off")
}

// copyModFile copies m's go.mod and go.sum into a directory of their own
// and returns the go.mod copy's name.
func (e *proxyEnv) copyModFile(m Module) (string, error) {
	dir, err := os.MkdirTemp(e.tmp, "modfile-")
	if err != nil {
		return "", err
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(e.root, filepath.FromSlash(m.Dir), name))
		if err != nil && !(name == "go.sum" && errors.Is(err, os.ErrNotExist)) {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "go.mod"), nil
}

// tidy fails when go mod tidy would change m's go.mod or go.sum. For an
// installable module, go.sum lines of authkit's own modules are left out
// of the comparison (see the package doc).
func (e *proxyEnv) tidy(m Module) error {
	dir := filepath.Join(e.root, filepath.FromSlash(m.Dir))
	if !m.Installable() {
		cmd := exec.Command("go", "mod", "tidy", "-diff")
		cmd.Dir, cmd.Env = dir, e.envFor(m)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("go mod tidy would change the module:\n%s", out)
		}
		return nil
	}
	modf, err := e.copyModFile(m)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "mod", "tidy", "-modfile="+modf)
	cmd.Dir, cmd.Env = dir, e.env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod tidy: %w\n%s", err, out)
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		got, err := os.ReadFile(filepath.Join(filepath.Dir(modf), name))
		if err != nil {
			return err
		}
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if name == "go.sum" {
			got = withoutAuthkit(got)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("go mod tidy would change %s:\n%s", name, got)
		}
	}
	return nil
}

// withoutAuthkit drops the go.sum lines of authkit's own modules.
func withoutAuthkit(sum []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(sum, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte(repoPath+"/")) {
			out = append(out, line...)
		}
	}
	return out
}
