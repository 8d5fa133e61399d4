package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// workSum compares go.work.sum with the one the go command makes from
// nothing: a copy of go.work whose use lines are absolute paths, in a
// directory of its own, an empty go.work.sum beside it, and in every
// module of the workspace the loads that go build, go vet, go test and
// go doc do (go list -deps -test ./..., and go list -m all, which go doc
// runs to find a package by name). With write, it replaces go.work.sum by
// that one instead of failing.
//
// Why: in workspace mode the go command keeps in go.work.sum the
// checksums it needs that no module's go.sum holds. When a command needs
// one the file lacks, it adds it and rewrites the whole file, also
// dropping the lines some go.sum already holds; so a go.work.sum that
// misses a line, or carries one a go.sum has, is rewritten by the first
// ordinary command (a plain go doc in core/ did it), and the tree is
// dirty. The checksums are those of files in the module cache, so the
// comparison turns the checksum database off.
func workSum(root string, write bool) error {
	name := filepath.Join(root, "go.work")
	wf, err := parseFile(name, modfile.ParseWork)
	if err != nil {
		return err
	}
	var uses []*modfile.Use
	var dirs []string
	for _, u := range wf.Use {
		dir := filepath.Join(root, filepath.FromSlash(u.Path))
		uses = append(uses, &modfile.Use{Path: filepath.ToSlash(dir), ModulePath: u.ModulePath})
		dirs = append(dirs, dir)
	}
	wf.SetUse(uses)
	wf.Cleanup()
	tmp, err := os.MkdirTemp("", "authkit-worksum-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "go.work")
	if err := os.WriteFile(work, modfile.Format(wf.Syntax), 0o644); err != nil {
		return err
	}
	env := append(os.Environ(), "GOWORK="+work, "GOSUMDB=off")
	run := func(dir string, args ...string) error {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: go %s: %w\n%s", dir, strings.Join(args, " "), err, stderr.Bytes())
		}
		return nil
	}
	if err := run(root, "list", "-m", "all"); err != nil {
		return err
	}
	for _, dir := range dirs {
		if err := run(dir, "list", "-deps", "-test", "./..."); err != nil {
			return err
		}
	}
	got, err := os.ReadFile(filepath.Join(tmp, "go.work.sum"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	sumName := filepath.Join(root, "go.work.sum")
	want, err := os.ReadFile(sumName)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if bytes.Equal(got, want) {
		return nil
	}
	if write {
		if len(got) == 0 {
			return os.Remove(sumName)
		}
		return os.WriteFile(sumName, got, 0o644)
	}
	return fmt.Errorf("go.work.sum is not what the workspace's go commands need, so the first of them rewrites it "+
		"(fix: cd .ci/release && GOWORK=off go run . worksum -w):\n%s", lineDiff(want, got))
}

// lineDiff lists the lines only in want ("-") and only in got ("+").
func lineDiff(want, got []byte) string {
	w := strings.Split(strings.TrimSpace(string(want)), "\n")
	g := strings.Split(strings.TrimSpace(string(got)), "\n")
	var b strings.Builder
	for _, l := range w {
		if l != "" && !slices.Contains(g, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range g {
		if l != "" && !slices.Contains(w, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}
