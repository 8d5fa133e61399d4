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
	write("docs/api.md", "# API\n\n## Routes\n")
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

	got, _, err := checkRefs(root)
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

// writeTree writes files (path: text) under a new root with a go.work.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files["go.work"] = "go 1.25.0\n"
	for rel, text := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// checkTree runs the reference check on root, compares its sorted report
// and returns how many references it checked.
func checkTree(t *testing.T, root string, want []string) counts {
	t.Helper()
	got, n, err := checkRefs(root)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	return n
}

// TestSlug pins GitHub's anchors for headings of the shapes the
// repository's documents use.
func TestSlug(t *testing.T) {
	for text, want := range map[string]string{
		"Deliberate deviations from the spec":                "deliberate-deviations-from-the-spec",
		"V2.1 Password security":                             "v21-password-security",
		"OWASP ASVS 4.0.3: V2 Authentication and V3 Session": "owasp-asvs-403-v2-authentication-and-v3-session",
		plain("Supporting users: `authkit user`"):            "supporting-users-authkit-user",
		plain("The building blocks (`core`)"):                "the-building-blocks-core",
		plain("**Bold** and [a link](x.md) / slash"):         "bold-and-a-link--slash",
		"Timing: known versus unknown accounts":              "timing-known-versus-unknown-accounts",
		"2FA verify":                                         "2fa-verify",
		"Testing a store of your own: storetest":             "testing-a-store-of-your-own-storetest",
		"snake_case stays":                                   "snake_case-stays",
	} {
		if got := slug(text); got != want {
			t.Errorf("slug(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestAnchors checks #anchors in links and after paths: into the file
// itself, another Markdown file, a folder (its README.md), duplicates
// numbered as GitHub numbers them, explicit <a id>, and anchors into
// files other than Markdown left alone.
func TestAnchors(t *testing.T) {
	root := writeTree(t, map[string]string{
		"docs/api.md": "# API\n\n## Rate limits\n\n## Notes\n\n### Notes\n\n<a id=\"custom\"></a>\n" +
			"```\n## Not a heading\n```\n",
		"pkg/README.md": "# Pkg\n\n## Database URLs\n",
		"pkg/x.go":      "// Package pkg: docs/api.md#rate-limits, docs/api.md#gone, pkg/x.go#L3.\npackage pkg\n",
		"README.md": "# Top\n\n## The building blocks (`core`)\n\n" +
			"[a](docs/api.md#rate-limits) [b](docs/api.md#notes-1) [c](docs/api.md#custom) [d](pkg#database-urls)\n" +
			"[e](#the-building-blocks-core) [f](pkg/x.go#L1) [g](https://x.test/a.md#nope)\n" +
			"[h](docs/api.md#notes-2) [i](#top-1) [j](pkg#gone) [k](docs/api.md#not-a-heading)\n" +
			"See docs/api.md#notes or docs/api.md#nope.\n",
	})
	n := checkTree(t, root, []string{
		"README.md:7: docs/api.md#notes-2: no heading or anchor #notes-2 in docs/api.md",
		"README.md:7: #top-1: no heading or anchor #top-1 in README.md",
		"README.md:7: pkg#gone: no heading or anchor #gone in pkg/README.md",
		"README.md:7: docs/api.md#not-a-heading: no heading or anchor #not-a-heading in docs/api.md",
		"README.md:8: docs/api.md#nope: no heading or anchor #nope in docs/api.md",
		"pkg/x.go:1: docs/api.md#gone: no heading or anchor #gone in docs/api.md",
	})
	// Nine links and four paths in prose into Markdown; the Go file's #L3
	// and #L1 and the URL's anchor are not checked.
	if n.anchors != 13 {
		t.Errorf("checked %d anchors, want 13", n.anchors)
	}
}

// TestSections checks quoted section names after a file in each form the
// repository uses, across a line break in a comment and in Markdown, and
// leaves quotes that follow no Markdown file alone.
func TestSections(t *testing.T) {
	root := writeTree(t, map[string]string{
		"SECURITY.md":         "# Security\n\n## Deliberate deviations from the spec\n\n### What the `app` must do\n\n### 14. Email codes\n",
		"docs/api.md":         "# API\n\n## Cookies\n",
		"lib/store/README.md": "# Store\n\n## Redis Cluster\n\n## Redis Sentinel\n",
		"README.md": "# Top\n\n## Passkeys\n\n" +
			"SECURITY.md, \"Deliberate deviations from the spec\"; docs/api.md \"Cookies\"; the README (\"Passkeys\").\n" +
			"[SECURITY.md](SECURITY.md), \"What the app must do\"; lib/store README, \"Redis Cluster\" and \"Redis Sentinel\".\n" +
			"SECURITY.md, \"Timing\"; docs/api.md: \"Cookies\", \"Sessions\"; the README,\n\"Gone\n away\".\n" +
			"SECURITY.md, \"Email codes\" and \"14. Email codes\"; SECURITY.md, \"4. Email codes\".\n" +
			"SECURITY.md deviation 14; deviations 14 and\n15; deviation 3, 14 or 99.\n" +
			"A \"quote\" alone, go.mod \"x\", https://x.test/SECURITY.md \"y\".\n" +
			"```\nSECURITY.md, \"In a block\"\n```\n",
		"lib/store/doc.go": "// Package store (README, \"Redis\n// Cluster\"; README, \"Redis\n// Nothing\"; see\n// docs/api.md, \"Nope\").\n" +
			"// Unquoted: (docs/api.md, Cookies), docs/api.md, Cookies. docs/api.md, Cook\n// ies; docs/api.md, Mails: x;\n" +
			"// ../../docs/api.md, README.md and docs/api.md, SECURITY.md, docs/api.md, Gone (x).\npackage store\n",
	})
	checkTree(t, root, []string{
		"README.md:7: SECURITY.md, \"Timing\": no such section in SECURITY.md",
		"README.md:7: docs/api.md, \"Sessions\": no such section in docs/api.md",
		"README.md:7: README, \"Gone away\": no such section in README.md",
		"README.md:11: deviation 15: SECURITY.md has no deviation numbered 15 (a heading \"### 15. ...\")",
		"README.md:12: deviation 3: SECURITY.md has no deviation numbered 3 (a heading \"### 3. ...\")",
		"README.md:12: deviation 99: SECURITY.md has no deviation numbered 99 (a heading \"### 99. ...\")",
		"README.md:10: SECURITY.md, \"4. Email codes\": no such section in SECURITY.md",
		"lib/store/doc.go:2: README, \"Redis Nothing\": no such section in lib/store/README.md",
		"lib/store/doc.go:4: docs/api.md, \"Nope\": no such section in docs/api.md",
		"lib/store/doc.go:5: docs/api.md, Cook ies: no such section in docs/api.md (quote a section's name, or name no section)",
		"lib/store/doc.go:6: docs/api.md, Mails: no such section in docs/api.md (quote a section's name, or name no section)",
		"lib/store/doc.go:7: docs/api.md, Gone: no such section in docs/api.md (quote a section's name, or name no section)",
	})
}

// TestIssues checks that numbered issues are reported in comments,
// Markdown, scripts, strings (test names) and identifiers, and that
// look-alikes are not.
func TestIssues(t *testing.T) {
	root := writeTree(t, map[string]string{
		"README.md": "# Top\n\nFixed (issue 13), see #28 and issues 7.\nNot: a&#39;b, x#1, #123abc, `##`, an issue with 2FA.\n",
		"pkg/a_test.go": "// Package pkg is after Issue #21.\npackage pkg\n\nimport \"testing\"\n\n" +
			"func TestIssue9(t *testing.T) { t.Run(\"issue 13 again\", nil); _ = \"&#34;\" }\n",
		"Makefile": "# see issue 4\nx:\n\techo $$#1\n",
	})
	msg := func(m string) string {
		return "\"" + m + "\" cites an issue of a tracker the repository does not hold: say what it is about"
	}
	checkTree(t, root, []string{
		"README.md:3: " + msg("issue 13"),
		"README.md:3: " + msg("#28"),
		"README.md:3: " + msg("issues 7"),
		"pkg/a_test.go:1: " + msg("Issue #21"),
		"pkg/a_test.go:6: " + msg("Issue9"),
		"pkg/a_test.go:6: " + msg("issue 13"),
		"Makefile:1: " + msg("issue 4"),
	})
}
