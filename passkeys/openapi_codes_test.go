package passkeys

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
)

// The rows of pkOps name each route's conditions by hand; this test reads
// the source to prove them, as core/auth's TestOpenAPIRowsAreTheFlowsConditions
// does for core's rows. From each route of Handler.routes it follows every
// function and method of this package and of core/auth (../core/auth, the
// workspace's and the replace directive's copy) the route can reach, by a
// call or as a value, and collects the auth.Err* variables they name and
// the 429 of each limit they use (core's limits fields; a RateLimit's, the
// BeginLimit, is ErrTooManyRequests). A row must list every condition its
// route can reach, but for those of its shape and the ones below, and
// nothing its route cannot reach. Calls through interfaces (the stores,
// go-webauthn, the hooks) are not followed.
func TestOpenAPIRowsAreTheRoutesConditions(t *testing.T) {
	authDir := filepath.Join("..", "core", "auth")
	if _, err := os.Stat(filepath.Join(authDir, "errors.go")); err != nil {
		t.Skipf("core/auth's source is not at %s: %v", authDir, err)
	}
	src := newSource()
	authPkg := src.check(t, "github.com/authkit-go/authkit/core/auth", authDir, nil)
	pkg := src.check(t, "github.com/authkit-go/authkit/passkeys", ".", authPkg)
	src.limits(t, authPkg)
	handlers := src.routes(t, pkg)

	// Conditions a route reaches but never returns: cleanName gives a
	// blank name "Passkey" before CheckPasskeyName could refuse it; the
	// 2FA finish refuses a request without the pending cookie its
	// ceremony was begun under (ErrPasskeyChallengeInvalid) before
	// FinishTwoFactor could say ErrNoPendingTwoFactor.
	notReturned := map[string][]*auth.Error{
		"POST " + Prefix + "/register/finish": {auth.ErrNameRequired},
		"POST " + Prefix + "/2fa/finish":      {auth.ErrNoPendingTwoFactor},
	}
	for _, op := range pkOps {
		name := op.method + " " + op.path
		h, ok := handlers[name]
		if !ok {
			t.Errorf("%s: not a route of Handler.routes", name)
			continue
		}
		reached := src.reach(h)
		listed := map[auth.Code]bool{}
		for _, e := range op.errs {
			listed[e.Code] = true
			if !reached[e.Code] {
				t.Errorf("%s lists %s, which the route never returns", name, e.Code)
			}
		}
		// ErrFeatureDisabled of the management methods: New refuses a
		// store without user.Passkeys.
		shape := map[auth.Code]bool{}
		if !slices.Contains(op.errs, auth.ErrFeatureDisabled) {
			shape[auth.ErrFeatureDisabled.Code] = true
		}
		for _, e := range slices.Concat(op.conditions(), notReturned[name]) {
			shape[e.Code] = true
		}
		for _, c := range slices.Sorted(maps.Keys(reached)) {
			if !listed[c] && !shape[c] {
				t.Errorf("%s: the route can answer %s, which its row does not list", name, c)
			}
		}
	}
	if len(handlers) != len(pkOps) {
		t.Errorf("Handler.routes has %d routes, pkOps %d rows", len(handlers), len(pkOps))
	}
}

// source is the non-test source of core/auth and of this package,
// type-checked with every other import left empty: only their own
// functions, variables and fields are resolved, which the walk follows.
type source struct {
	fset     *token.FileSet
	info     *types.Info
	decls    map[*types.Func]*ast.FuncDecl
	codeOf   map[*types.Var]auth.Code // the *Error variables: def(status, "code", text)
	limitErr map[*types.Var]auth.Code // the limits' 429s
}

func newSource() *source {
	return &source{fset: token.NewFileSet(), decls: map[*types.Func]*ast.FuncDecl{}, codeOf: map[*types.Var]auth.Code{},
		limitErr: map[*types.Var]auth.Code{},
		info:     &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}}}
}

// importer gives authPkg for core/auth and an empty package for the rest.
type importer struct{ auth *types.Package }

func (im importer) Import(p string) (*types.Package, error) {
	if im.auth != nil && p == im.auth.Path() {
		return im.auth, nil
	}
	pkg := types.NewPackage(p, path.Base(p))
	pkg.MarkComplete()
	return pkg, nil
}

// check parses and type-checks the package in dir, recording its
// functions and *Error variables.
func (s *source) check(t *testing.T, pkgPath, dir string, authPkg *types.Package) *types.Package {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, de := range entries {
		if n := de.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			f, err := parser.ParseFile(s.fset, filepath.Join(dir, n), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	conf := types.Config{Importer: importer{authPkg}, Error: func(error) {}} // the empty imports' errors are expected
	pkg, _ := conf.Check(pkgPath, s.fset, files, s.info)
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if fn, ok := s.info.Defs[d.Name].(*types.Func); ok {
					s.decls[fn] = d
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					vs, ok := spec.(*ast.ValueSpec)
					if !ok {
						continue
					}
					for i, name := range vs.Names {
						call, ok := valueAt(vs, i).(*ast.CallExpr)
						if !ok || len(call.Args) != 3 {
							continue
						}
						if fn, ok := call.Fun.(*ast.Ident); !ok || fn.Name != "def" {
							continue
						}
						code, err := strconv.Unquote(call.Args[1].(*ast.BasicLit).Value)
						if err != nil {
							t.Fatalf("%s: %v", name.Name, err)
						}
						s.codeOf[s.info.Defs[name].(*types.Var)] = auth.Code(code)
					}
				}
			}
		}
	}
	return pkg
}

func valueAt(vs *ast.ValueSpec, i int) ast.Expr {
	if i < len(vs.Values) {
		return vs.Values[i]
	}
	return nil
}

// limits reads the 429 of each of core's limits fields from newLimits
// ({&ls.loginIP, limitSpec{"login:ip", ErrTooManyLogins, ...}}), and
// gives RateLimit's limiter ErrTooManyRequests, the error NewRateLimit
// makes it with.
func (s *source) limits(t *testing.T, authPkg *types.Package) {
	t.Helper()
	newLimits, _ := authPkg.Scope().Lookup("newLimits").(*types.Func)
	if s.decls[newLimits] == nil {
		t.Fatal("core/auth's newLimits not found")
	}
	ast.Inspect(s.decls[newLimits], func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || len(lit.Elts) != 2 {
			return true
		}
		addr, ok1 := lit.Elts[0].(*ast.UnaryExpr)
		spec, ok2 := lit.Elts[1].(*ast.CompositeLit)
		if !ok1 || !ok2 || len(spec.Elts) < 2 {
			return true
		}
		sel, ok1 := addr.X.(*ast.SelectorExpr)
		errID, ok2 := spec.Elts[1].(*ast.Ident)
		if ok1 && ok2 {
			field, _ := s.info.Uses[sel.Sel].(*types.Var)
			errVar, _ := s.info.Uses[errID].(*types.Var)
			if field != nil && s.codeOf[errVar] != "" {
				s.limitErr[field] = s.codeOf[errVar]
			}
		}
		return true
	})
	rl, _ := authPkg.Scope().Lookup("RateLimit").Type().Underlying().(*types.Struct)
	for f := range rl.Fields() {
		if f.Name() == "lim" {
			s.limitErr[f] = auth.ErrTooManyRequests.Code
		}
	}
	if len(s.limitErr) < 2 {
		t.Fatal("the limits' errors were not read")
	}
}

// routes reads Handler.routes' table: {"POST " + Prefix + "/x", handler},
// the handler a function literal or a method value.
func (s *source) routes(t *testing.T, pkg *types.Package) map[string]ast.Node {
	t.Helper()
	var routes *ast.FuncDecl
	for fn, d := range s.decls {
		if fn.Pkg() == pkg && fn.Name() == "routes" {
			routes = d
		}
	}
	if routes == nil {
		t.Fatal("Handler.routes not found")
	}
	out := map[string]ast.Node{}
	ast.Inspect(routes, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || len(lit.Elts) != 2 {
			return true
		}
		tv, ok := s.info.Types[lit.Elts[0]]
		if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
			return true
		}
		out[constant.StringVal(tv.Value)] = lit.Elts[1]
		return false
	})
	return out
}

// reach returns the codes of the conditions node can reach through the
// functions of the two packages.
func (s *source) reach(node ast.Node) map[auth.Code]bool {
	out := map[auth.Code]bool{}
	seen := map[*types.Func]bool{}
	var inspect func(n ast.Node)
	inspect = func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			switch o := s.info.Uses[id].(type) {
			case *types.Func:
				if d := s.decls[o]; d != nil && d.Body != nil && !seen[o] {
					seen[o] = true
					inspect(d.Body)
				}
			case *types.Var:
				if c := s.codeOf[o]; c != "" {
					out[c] = true
				}
				if c := s.limitErr[o]; c != "" {
					out[c] = true
				}
			}
			return true
		})
	}
	inspect(node)
	return out
}
