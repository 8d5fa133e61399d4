package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCheckRefs runs the reference check on a small repository: every
// kind of reference it must report, and the look-alikes it must not.
func TestCheckRefs(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	design := "DESIGN" + ".md" // spelled apart so this file does not trip the check
	write("go.work", "go 1.25.0\n")
	write("docs/api.md", "# API\n")
	write("README.md", "# x\n"+
		"[ok](docs/api.md#routes) [bad](docs/missing.md) [web](https://x.test/z.md) [anchor](#x) [root](/docs/api.md)\n"+
		"See pkg/doc.go, pkg/gone.go and `core/auth/doc.go`.\n"+
		"```sh\n"+
		"cat not/checked.md # but "+design+" is\n"+
		"```\n")
	write("pkg/doc.go", "// Package pkg is a test.\npackage pkg\n")
	write("pkg/testdata/seed.txt", "")
	write("pkg/a.go", "// See "+design+" \"Tokens\", docs/api.md, docs/nope.md,\n"+
		"// NOPE.md, README.md, doc.go, go.mod, github.com/x/y/z.go, /api/auth/x.go,\n"+
		"// https://example.com/a/b.md, testdata/seed.txt, testdata/gone.txt,\n"+
		"// core/*/doc.go, bench/results/t.md and shared"+"/spec.\n"+
		"package pkg\n\n"+
		"var s = \"docs/not-a-comment.md\"\n")
	write("Makefile", "x:\n\t# see "+design+"\n\tcp a/b.go c\n")
	write("node_modules/m/README.md", "[bad](nowhere.md)\n")

	got, err := checkRefs(root)
	if err != nil {
		t.Fatal(err)
	}
	outside := func(name string) string {
		return name + " is outside the repository: cite ARCHITECTURE.md, docs/api.md or SECURITY.md instead"
	}
	want := []string{
		"Makefile:2: " + outside(design),
		"README.md:2: link to docs/missing.md: no such file",
		"README.md:3: core/auth/doc.go: no such file in the repository",
		"README.md:3: pkg/gone.go: no such file in the repository",
		"README.md:5: " + outside(design),
		"pkg/a.go:1: " + outside(design),
		"pkg/a.go:1: docs/nope.md: no such file in the repository",
		"pkg/a.go:2: NOPE.md: no such file in the repository",
		"pkg/a.go:3: testdata/gone.txt: no such file in the repository",
		"pkg/a.go:4: " + outside("shared/spec"),
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
