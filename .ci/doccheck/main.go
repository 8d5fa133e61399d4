// Command doccheck fails when authkit's documentation has a hole:
//
//   - an exported name in non-test Go code has no doc comment: every
//     package, exported type, function, method, constant and variable a
//     user can reach must say what it is;
//
//   - a Go comment or a Markdown file refers to a file, a heading or a
//     section that is not in the repository, or to a numbered issue of a
//     tracker it does not hold, so a reader who has only the repository
//     cannot follow it.
//
//     go run .ci/doccheck/main.go [-root dir] [dir ...]
//
// The doc-comment check walks each dir (default: the current directory).
// Exported methods on unexported types, and members of a documented group
// (a const or var block with a comment), are not required to have their
// own comment. Generated files, testdata, examples/ and bench/ are skipped.
//
// The reference check walks the whole repository, -root (default: the
// nearest directory from the current one up that holds go.work, else the
// current directory). It reads every Go file's comments, every Markdown
// file (outside fenced code blocks for the file references) and the
// comments of the Makefile and shell scripts, skipping .git, other hidden
// directories but .ci, node_modules, testdata, artifacts and bench/results.
// It reports, with file:line:
//
//   - a mention of the design or spec files that live outside the
//     repository (the names are in outsideRefs);
//   - a Markdown link [text](target) whose target, relative to the
//     Markdown file (or to the root when it starts with /), does not
//     exist; URLs with a scheme (https:, mailto:) are not checked;
//   - an #anchor, in a link ([text](docs/api.md#cookies), a folder's
//     anchor for its README.md, an anchor alone for the file itself) or right after a path in
//     prose (docs/api.md#rate-limits), that no heading of the Markdown
//     file makes (GitHub's slug, duplicates numbered -1, -2) and no
//     <a id> or <a name> defines; anchors into other files are not checked;
//   - a quoted section name after a Markdown file, the form the docs cite
//     sections in: SECURITY.md, "Deliberate deviations from the spec";
//     docs/api.md "Cookies"; [SECURITY.md](SECURITY.md), "Known limits";
//     the README ("Passkeys"), a README alone meaning the nearest one up;
//     adapters/redisstore README, "Redis Cluster" and "Redis Sentinel".
//     A comma and a capitalised name without quotes, as Go comments cite
//     docs/api.md (docs/api.md, Rate limits), is checked the same way, the
//     name running to the next ) . ; : , ( or blank line.
//     Each name must be the text of a heading of that file, as rendered
//     (backticks and bold markers dropped; a numbered heading, "14. Email
//     codes", answers to its name alone too), across line breaks too;
//   - a deviation from the spec cited by number ("deviation 12",
//     "deviations 4 and 10") that is no numbered heading of SECURITY.md;
//   - a numbered issue ("issue 13", "issues 7", "#28") in a comment, a
//     Markdown file outside fenced blocks, a script, or a Go string or
//     identifier (test names): the repository holds no issue tracker
//     (this checker's own folder, which spells them out, excepted);
//   - a file path with a slash and a known extension (docs/api.md,
//     core/auth/doc.go, ginauth/go.mod) that exists neither from the root
//     nor from the referring file's directory or any directory between it
//     and the root (so a package comment may name a file of its testdata
//     directory, and a module's README its own go.mod); paths into the
//     directories the build writes (outputs) count as present;
//   - a bare Markdown file name (SECURITY.md) that exists in none of those
//     directories.
//
// Not references: URLs, paths whose first element is a domain
// (github.com/...), paths that start with / (URL paths such as
// /api/auth/login), paths with placeholders or wildcards (*_test.go,
// {token}, <Target>), and bare names other than *.md (doc.go, go.mod),
// which name a file of the package or module at hand. In the Makefile and
// shell scripts only the outside files are looked for: their paths are
// often build outputs.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	repoRoot := flag.String("root", "", "repository root for the reference check (default: the directory holding go.work)")
	flag.Parse()
	roots := flag.Args()
	if len(roots) == 0 {
		roots = []string{"."}
	}
	var problems []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "examples" || name == "bench" || name == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				return nil
			}
			problems = append(problems, check(path)...)
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "doccheck:", err)
			os.Exit(2)
		}
	}
	for dir, documented := range packageDocs {
		if !documented {
			problems = append(problems, dir+": package has no package doc comment")
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		fmt.Println(p)
	}
	root := *repoRoot
	if root == "" {
		root = findRoot()
	}
	refs, counts, err := checkRefs(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "doccheck:", err)
		os.Exit(2)
	}
	sort.Strings(refs)
	for _, p := range refs {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "doccheck: %d exported names without a doc comment\n", len(problems))
	}
	fmt.Fprintf(os.Stderr, "doccheck: checked %d file references, %d anchors, %d section names\n",
		counts.files, counts.anchors, counts.sections)
	if len(refs) > 0 {
		fmt.Fprintf(os.Stderr, "doccheck: %d references that a reader of the repository cannot follow\n", len(refs))
	}
	if len(problems) > 0 || len(refs) > 0 {
		os.Exit(1)
	}
}

// packageDocs records, per directory, whether any file of its package has
// a package doc comment.
var packageDocs = map[string]bool{}

func check(path string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", path, err)}
	}
	if ast.IsGenerated(f) {
		return nil
	}
	dir := filepath.Dir(path)
	packageDocs[dir] = packageDocs[dir] || f.Doc != nil
	if f.Name.Name == "main" {
		return nil
	}
	var out []string
	report := func(pos token.Pos, what string) {
		out = append(out, fmt.Sprintf("%s: %s has no doc comment", fset.Position(pos), what))
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil && !exportedRecv(d.Recv) {
				continue
			}
			report(d.Pos(), "func "+d.Name.Name)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
						report(s.Pos(), "type "+s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Doc == nil && d.Doc == nil && s.Comment == nil {
							report(n.Pos(), "name "+n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

func exportedRecv(fl *ast.FieldList) bool {
	if len(fl.List) == 0 {
		return false
	}
	t := fl.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// The reference check.

// outsideRefs are files that authkit's docs once cited but that live
// outside the repository: the original design and spec. The repository's
// own versions are ARCHITECTURE.md and docs/api.md.
var outsideRefs = []string{"DESIGN" + ".md", "shared" + "/spec"}

var (
	// mdLink is a Markdown inline link or image: [text](target "title").
	mdLink = regexp.MustCompile(`\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// pathRef is a file name with a known extension, with or without
	// directories. Where it starts and ends is checked by isolated.
	pathRef = regexp.MustCompile(`(?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(?:md|go|mod|sum|sql|sh|yml|yaml|json|toml|txt|html|tmpl|js|css)\b`)
	// url is anything with a scheme; its path is not a file reference.
	url = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s)>\]"'` + "`" + `]*`)
	// domain is a first path element that is a host name (github.com).
	domain = regexp.MustCompile(`^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$`)
	// scheme starts a link target that is not a file (https:, mailto:).
	scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// outputs are the directories the build writes and git ignores: a
// reference into one names a file a command makes.
var outputs = []string{"bench/results", "artifacts", ".bin", ".proxy", ".authkit", "e2e/node_modules"}

// findRoot returns the nearest directory from the current one up that
// holds go.work, or the current directory.
func findRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}

// refChecker holds the root of one reference check.
type refChecker struct {
	root string
	out  []string
	docs map[string]*mdDoc // Markdown files read for their headings, by path
	n    counts
}

// counts are how many references of each kind the check followed.
type counts struct{ files, anchors, sections int }

// checkRefs walks root and returns a problem per unresolved reference,
// and how many references it checked.
func checkRefs(root string) ([]string, counts, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, counts{}, err
	}
	c := &refChecker{root: root, docs: map[string]*mdDoc{}}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && ((strings.HasPrefix(name, ".") && name != ".ci") || name == "node_modules" ||
				name == "testdata" || rel == "artifacts" || rel == "bench/results") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(name, ".go"):
			return c.goFile(path, rel)
		case strings.HasSuffix(name, ".md"):
			return c.markdown(path, rel)
		case name == "Makefile" || strings.HasSuffix(name, ".sh") || rel == ".ci/run":
			return c.script(path, rel)
		}
		return nil
	})
	return c.out, c.n, err
}

func (c *refChecker) report(rel string, line int, format string, args ...any) {
	c.out = append(c.out, fmt.Sprintf("%s:%d: %s", rel, line, fmt.Sprintf(format, args...)))
}

// goFile checks the comments of one Go file.
func (c *refChecker) goFile(path, rel string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		c.report(rel, 0, "cannot parse: %v", err)
		return nil
	}
	for _, g := range f.Comments {
		var text []string
		var nums []int
		for _, cm := range g.List {
			first := fset.Position(cm.Slash).Line
			body := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSuffix(cm.Text, "*/"), "//"), "/*")
			for i, line := range strings.Split(cm.Text, "\n") {
				c.line(rel, first+i, line, false)
			}
			for i, line := range strings.Split(body, "\n") {
				text = append(text, line)
				nums = append(nums, first+i)
			}
		}
		c.sections(rel, text, nums)
	}
	// Test names and other strings and identifiers must not cite an issue
	// either: a subtest named after "issue 13" means nothing here.
	ast.Inspect(f, func(n ast.Node) bool {
		if strings.HasPrefix(rel, self) {
			return false
		}
		var m string
		switch x := n.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				m = issueWord.FindString(x.Value)
			}
		case *ast.Ident:
			m = issueIdent.FindString(x.Name)
		}
		if m != "" {
			c.report(rel, fset.Position(n.Pos()).Line, "%q cites an issue of a tracker the repository does not hold: say what it is about", m)
		}
		return true
	})
	return nil
}

// markdown checks one Markdown file: links and paths outside fenced code
// blocks, the outside files everywhere.
func (c *refChecker) markdown(path, rel string) error {
	var text []string
	var nums []int
	err := eachLine(path, func(n int, line string, fenced bool) {
		if fenced {
			c.outside(rel, n, line)
			return
		}
		c.line(rel, n, line, true)
		text = append(text, line)
		nums = append(nums, n)
	})
	c.sections(rel, text, nums)
	return err
}

// script checks a Makefile or shell script for the outside files only.
func (c *refChecker) script(path, rel string) error {
	return eachLine(path, func(n int, line string, _ bool) {
		c.outside(rel, n, line)
		c.issues(rel, n, line, false)
	})
}

// eachLine calls fn for every line of path, saying whether it is inside a
// fenced code block (``` or ~~~).
func eachLine(path string, fn func(n int, line string, fenced bool)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	fenced := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		fn(n, line, fenced)
	}
	return sc.Err()
}

// outside reports the outside files named on line.
func (c *refChecker) outside(rel string, n int, line string) {
	for _, o := range outsideRefs {
		if strings.Contains(line, o) {
			c.report(rel, n, "%s is outside the repository: cite ARCHITECTURE.md, docs/api.md or SECURITY.md instead", o)
		}
	}
}

// isOutside reports whether ref is one of outsideRefs, reported already.
func isOutside(ref string) bool {
	for _, o := range outsideRefs {
		if strings.Contains(ref, o) {
			return true
		}
	}
	return false
}

// line checks one line of a comment or a Markdown file.
func (c *refChecker) line(rel string, n int, line string, markdown bool) {
	c.outside(rel, n, line)
	c.issues(rel, n, line, true)
	self := filepath.Join(c.root, filepath.FromSlash(rel))
	dir := filepath.Dir(self)
	if markdown {
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if scheme.MatchString(target) {
				continue
			}
			target, anchor, _ := strings.Cut(target, "#")
			target, _, _ = strings.Cut(target, "?")
			c.n.files++
			p := filepath.Join(dir, filepath.FromSlash(target))
			switch {
			case target == "":
				p = self
			case strings.HasPrefix(target, "/"):
				p = filepath.Join(c.root, filepath.FromSlash(target))
			}
			if _, err := os.Stat(p); err != nil {
				c.report(rel, n, "link to %s: no such file", m[1])
				continue
			}
			if anchor != "" {
				c.anchor(rel, n, m[1], p, anchor)
			}
		}
		line = mdLink.ReplaceAllString(line, "")
	}
	line = url.ReplaceAllString(line, "")
	for _, ix := range pathRef.FindAllStringIndex(line, -1) {
		ref := line[ix[0]:ix[1]]
		if !isolated(line, ix[0], ix[1]) || isOutside(ref) {
			continue
		}
		first, _, hasSlash := strings.Cut(ref, "/")
		if hasSlash && domain.MatchString(first) {
			continue
		}
		if !hasSlash && !strings.HasSuffix(ref, ".md") {
			continue
		}
		c.n.files++
		p, ok := c.resolve(dir, ref)
		if !ok {
			c.report(rel, n, "%s: no such file in the repository", ref)
			continue
		}
		if a := anchorAfter.FindStringSubmatch(line[ix[1]:]); a != nil && p != "" {
			c.anchor(rel, n, ref+"#"+a[1], p, a[1])
		}
	}
}

// isolated reports whether line[i:j] is a whole path: not the tail of a
// URL path or a longer token, and not followed by more of one.
func isolated(line string, i, j int) bool {
	if i > 0 {
		b := line[i-1]
		if isWord(b) || strings.IndexByte("/*{}<>$~@:.%\\", b) >= 0 {
			return false
		}
	}
	if j < len(line) {
		b := line[j]
		if isWord(b) || strings.IndexByte("/*{}<>$~@%\\", b) >= 0 {
			return false
		}
		if b == '.' && j+1 < len(line) && isWord(line[j+1]) {
			return false
		}
	}
	return true
}

func isWord(b byte) bool {
	return b == '_' || b == '-' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// resolve reports whether ref names a file or directory relative to dir,
// to any directory between dir and the root, or to the root, or a file in
// one of the outputs, and returns the nearest such file ("" for one in the
// outputs).
func (c *refChecker) resolve(dir, ref string) (string, bool) {
	ref = filepath.FromSlash(strings.TrimPrefix(ref, "./"))
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ref)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
		for _, o := range outputs {
			if strings.HasPrefix(p, filepath.Join(c.root, filepath.FromSlash(o))+string(filepath.Separator)) {
				return "", true
			}
		}
		if d == c.root || !strings.HasPrefix(d, c.root) || filepath.Dir(d) == d {
			return "", false
		}
	}
}

// Issue numbers. The repository holds no issue tracker, so "issue 13" or
// "#13" tells its reader nothing: a reference says what it is about.
var (
	// issueWord is "issue 13", "issues 13 and 17", "Issue #13", "issue13".
	issueWord = regexp.MustCompile(`(?i)\bissues?[ _]?#?[0-9]+`)
	// issueIdent is an identifier naming one: TestIssue13, issue_13.
	issueIdent = regexp.MustCompile(`(?i)issue_?[0-9]+`)
	// issueHash is "#13" standing alone (not "&#39;", "a#1" or "#13abc").
	issueHash = regexp.MustCompile(`(?:^|[\s(\[,;])#[0-9]{1,4}\b`)
)

// self is this checker's folder: its documentation and tests spell out
// the issue numbers it looks for.
const self = ".ci/doccheck/"

// issues reports the issue numbers cited on line; hashes are looked for
// only in prose (comments and Markdown), where "#13" cannot be code.
func (c *refChecker) issues(rel string, n int, line string, prose bool) {
	if strings.HasPrefix(rel, self) {
		return
	}
	for _, m := range issueWord.FindAllString(line, -1) {
		c.report(rel, n, "%q cites an issue of a tracker the repository does not hold: say what it is about", m)
	}
	if !prose {
		return
	}
	for _, m := range issueHash.FindAllString(issueWord.ReplaceAllString(line, ""), -1) {
		c.report(rel, n, "%q cites an issue of a tracker the repository does not hold: say what it is about", strings.TrimLeft(m, " \t([,;"))
	}
}

// Sections. A Markdown file's headings give its anchors (GitHub's slugs,
// the targets of docs/api.md#cookies) and its section names, which prose cites
// in quotes after the file: SECURITY.md, "Deliberate deviations from the
// spec"; docs/api.md "Cookies"; the README ("Passkeys"); adapters/redisstore
// README, "Redis Cluster" and "Redis Sentinel".

// mdDoc is what one Markdown file offers to references into it.
type mdDoc struct {
	anchors  map[string]bool // GitHub's heading slugs and explicit <a id> / <a name>
	sections map[string]bool // heading texts, as rendered (no backticks, emphasis or link targets)
	numbered map[string]bool // the numbers of numbered headings ("14. Email codes": "14")
}

var (
	// heading is an ATX heading; group 2 is its text.
	heading = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	// htmlAnchor is an explicit anchor: <a id="x"> or <a name="x">.
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// numbered is the number of a numbered heading ("14. ").
	numbered = regexp.MustCompile(`^[0-9]+\.\s+`)
	// anchorAfter is the #anchor right after a file path in prose.
	anchorAfter = regexp.MustCompile(`^#([A-Za-z0-9_-]+)`)
	// inlineMarkup is what a heading's rendered text drops.
	inlineMarkup = strings.NewReplacer("`", "", "**", "", "__", "")
	// slugDrop is every character GitHub drops from a heading's slug.
	slugDrop = regexp.MustCompile(`[^\p{L}\p{M}\p{N}\p{Pc} -]`)
	// sectionRef is a Markdown file (a link to one, a path, or a README
	// named by its folder or alone) followed by one or more quoted section
	// names: group 1, 2 or 3/4 the file, group 5 the quotes.
	sectionRef = regexp.MustCompile(`(?:\[[^\]]*\]\(([^)\s#]+\.md)\)|((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.md)|(?:((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+)\s+)?\b(README)\b)` +
		`\)?[,:]?\s*\(?((?:"[^"]{1,120}")(?:(?:,\s*|,?\s+(?:and|or)\s+)"[^"]{1,120}")*)`)
	// unquotedRef is a Markdown path, a comma and a section name without
	// quotes, as Go comments cite docs/api.md: (docs/api.md, Rate limits).
	// The name starts with a capital and runs to a ) . ; : , ( or a blank
	// line; group 1 is the file, group 2 the name.
	unquotedRef = regexp.MustCompile(`((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.md)\)?, ([A-Z][A-Za-z0-9 \n-]*?)\s*(?:[).;:,(]|\n\n|$)`)
	// deviationRef is "deviation 4", "deviations 4 and 10", "deviations
	// 2, 3 or 12": SECURITY.md's numbered deviations from the spec.
	deviationRef = regexp.MustCompile(`(?i)\bdeviations?\s+([0-9]+(?:(?:,\s*|,?\s+(?:and|or)\s+)[0-9]+)*)`)
	// number is one number of deviationRef's list.
	number = regexp.MustCompile(`[0-9]+`)
	// allCaps is a word such as README or SECURITY: a file, not a section.
	allCaps = regexp.MustCompile(`^[A-Z]+$`)
	// quoted is one quoted name of sectionRef's group 5.
	quoted = regexp.MustCompile(`"([^"]+)"`)
)

// slug is the anchor GitHub gives a heading of that rendered text.
func slug(text string) string {
	return strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(strings.TrimSpace(text)), ""), " ", "-")
}

// plain is a heading's text as rendered: link targets, backticks and bold
// markers gone.
func plain(text string) string {
	text = mdLink.ReplaceAllStringFunc(text, func(l string) string {
		return l[1:strings.Index(l, "](")]
	})
	return strings.Join(strings.Fields(inlineMarkup.Replace(text)), " ")
}

// doc reads the headings of the Markdown file at path, once.
func (c *refChecker) doc(path string) (*mdDoc, error) {
	if d, ok := c.docs[path]; ok {
		return d, nil
	}
	d := &mdDoc{anchors: map[string]bool{}, sections: map[string]bool{}, numbered: map[string]bool{}}
	seen := map[string]int{}
	err := eachLine(path, func(_ int, line string, fenced bool) {
		if fenced {
			return
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			d.anchors[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			return
		}
		text := plain(m[2])
		d.sections[text] = true
		d.sections[numbered.ReplaceAllString(text, "")] = true // "14. Email codes" is "Email codes" too
		if n := numbered.FindString(text); n != "" {
			d.numbered[strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(n), "."))] = true
		}
		s := slug(text)
		if k := seen[s]; k > 0 {
			d.anchors[fmt.Sprintf("%s-%d", s, k)] = true
		} else {
			d.anchors[s] = true
		}
		seen[s]++
	})
	if err != nil {
		return nil, err
	}
	c.docs[path] = d
	return d, nil
}

// markdownFile is the Markdown file a reference to p means: p itself, or
// a folder's README.md (as GitHub shows it); "" for anything else.
func markdownFile(p string) string {
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		p = filepath.Join(p, "README.md")
	}
	if !strings.HasSuffix(p, ".md") {
		return ""
	}
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// anchor reports an #anchor that the Markdown file at p does not define;
// anchors into other kinds of file (a Go file's #L10) are not checked.
func (c *refChecker) anchor(rel string, n int, ref, p, anchor string) {
	p = markdownFile(p)
	if p == "" {
		return
	}
	d, err := c.doc(p)
	if err != nil {
		c.report(rel, n, "%s: %v", ref, err)
		return
	}
	c.n.anchors++
	if !d.anchors[anchor] {
		c.report(rel, n, "%s: no heading or anchor #%s in %s", ref, anchor, c.relative(p))
	}
}

// relative is p relative to the root, with slashes.
func (c *refChecker) relative(p string) string {
	r, err := filepath.Rel(c.root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}

// sections checks the quoted section names cited after a Markdown file in
// a text (a comment group, or a Markdown file outside its fenced blocks):
// text holds its lines, nums their line numbers. A cited file that does
// not exist is reported by the file check, not here.
func (c *refChecker) sections(rel string, text []string, nums []int) {
	joined := strings.Join(text, "\n")
	dir := filepath.Dir(filepath.Join(c.root, filepath.FromSlash(rel)))
	for _, m := range sectionRef.FindAllStringSubmatchIndex(joined, -1) {
		group := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return joined[m[2*i]:m[2*i+1]]
		}
		if m[0] > 0 && strings.IndexByte("/.", joined[m[0]-1]) >= 0 || isOutside(group(0)) {
			continue // the tail of a URL or a longer path, or an outside file, reported already
		}
		var p, cited string
		switch {
		case group(1) != "":
			cited = group(1)
			p = filepath.Join(dir, filepath.FromSlash(cited))
			if strings.HasPrefix(cited, "/") {
				p = filepath.Join(c.root, filepath.FromSlash(cited))
			}
		case group(2) != "":
			cited = group(2)
			p, _ = c.resolve(dir, cited)
		case group(3) != "":
			cited = group(3) + " README"
			p, _ = c.resolve(dir, group(3)+"/README.md")
		default:
			cited = "README"
			p, _ = c.resolve(dir, "README.md")
		}
		p = markdownFile(p)
		if p == "" {
			continue
		}
		d, err := c.doc(p)
		if err != nil {
			return
		}
		line := nums[strings.Count(joined[:m[0]], "\n")]
		for _, q := range quoted.FindAllStringSubmatch(group(5), -1) {
			name := strings.Join(strings.Fields(q[1]), " ")
			c.n.sections++
			if !d.sections[name] {
				c.report(rel, line, "%s, %q: no such section in %s", cited, name, c.relative(p))
			}
		}
	}
	c.deviations(rel, joined, nums)
	for _, m := range unquotedRef.FindAllStringSubmatchIndex(joined, -1) {
		file, name := joined[m[2]:m[3]], strings.Join(strings.Fields(joined[m[4]:m[5]]), " ")
		if m[0] > 0 && strings.IndexByte("/.", joined[m[0]-1]) >= 0 || allCaps.MatchString(name) ||
			m[1] < len(joined) && joined[m[1]-1] == '.' && isWord(joined[m[1]]) {
			continue // a URL's tail, or a file named next (README, SECURITY.md), not a section
		}
		p, _ := c.resolve(dir, file)
		if p = markdownFile(p); p == "" {
			continue
		}
		d, err := c.doc(p)
		if err != nil {
			return
		}
		c.n.sections++
		if !d.sections[name] {
			c.report(rel, nums[strings.Count(joined[:m[0]], "\n")], "%s, %s: no such section in %s (quote a section's name, or name no section)", file, name, c.relative(p))
		}
	}
}

// deviations checks that each deviation cited by number ("deviation 12")
// is a numbered heading ("### 12. ...") of the root's SECURITY.md.
func (c *refChecker) deviations(rel, joined string, nums []int) {
	ms := deviationRef.FindAllStringSubmatchIndex(joined, -1)
	if len(ms) == 0 {
		return
	}
	security := filepath.Join(c.root, "SECURITY.md")
	d, err := c.doc(security)
	if err != nil {
		c.report(rel, nums[0], "deviations cited, but SECURITY.md cannot be read: %v", err)
		return
	}
	for _, m := range ms {
		for _, n := range number.FindAllString(joined[m[2]:m[3]], -1) {
			c.n.sections++
			if !d.numbered[n] {
				c.report(rel, nums[strings.Count(joined[:m[0]], "\n")], "deviation %s: SECURITY.md has no deviation numbered %s (a heading \"### %s. ...\")", n, n, n)
			}
		}
	}
}
