package auth

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The rows of apiOps name each route's conditions by hand; this test reads
// the package's source to prove them. From each route's handler (the
// routes table) it follows every function and method of the package the
// handler can reach, by a call or as a value (a closure passed to a
// helper), and collects the conditions they name: the *Error variables
// (def in errors.go and beside the flows) and the 429 of each limit they
// use (the limits fields, whose errors newLimits sets). A row must list
// every condition its route can reach, but for those of its shape
// (conditions adds them) and ErrFeatureDisabled (a route of a feature
// switched off, or of a store the Service lacks, is not registered); and
// it must list nothing its route cannot reach. Calls through interfaces
// (the stores, the hooks) are not followed: what they fail with is wrapped
// (500, 503) or is the app's own (hooks).
func TestOpenAPIRowsAreTheFlowsConditions(t *testing.T) {
	src := loadSource(t)
	byCode := map[Code]*Error{}
	for _, e := range codes {
		byCode[e.Code] = e
	}
	for _, op := range apiOps {
		handler, ok := src.handlers[op.method+" "+op.path]
		if !ok {
			t.Errorf("%s %s: no handler in the routes table", op.method, op.path)
			continue
		}
		reached := src.reach(handler)
		listed := map[Code]bool{}
		for _, e := range op.errs {
			listed[e.Code] = true
			if !reached[e.Code] {
				t.Errorf("%s %s lists %s, which its flow (%s) never returns", op.method, op.path, e.Code, handler.Name())
			}
		}
		shape := map[Code]bool{ErrFeatureDisabled.Code: true}
		for _, e := range op.conditions() {
			shape[e.Code] = true
		}
		for _, e := range notReturned[handler.Name()] {
			shape[e.Code] = true
		}
		for _, c := range slices.Sorted(maps.Keys(reached)) {
			if !listed[c] && !shape[c] {
				t.Errorf("%s %s: its flow (%s) can answer %s, which its row does not list", op.method, op.path, handler.Name(), c)
			}
			if byCode[c] == nil {
				t.Errorf("%s %s: its flow names %s, not a condition of Codes", op.method, op.path, c)
			}
		}
	}
}

// notReturned are the conditions a handler reaches but never returns, by
// handler: Login reads normalizeEmail's error only to skip the email's
// limit and lookup (an odd address fails as invalid_credentials); the
// flows of a new password call checkPolicy, whose ErrPasswordInvalid
// cannot happen there: checkText refused the password's invalid
// characters first (no printable character is a control one after NFKC).
var notReturned = map[string][]*Error{
	"loginRoute":          typedEmail,
	"registerRoute":       {ErrPasswordInvalid},
	"resetPasswordRoute":  {ErrPasswordInvalid},
	"changePasswordRoute": {ErrPasswordInvalid},
}

// notFollowed are the functions the walk does not enter: statusOf maps an
// error to the status an Observer is told a flow ended with; it answers
// nothing.
var notFollowed = map[string]bool{"statusOf": true}

// source is the package's non-test source, type-checked on its own (the
// imported packages are left empty: only the package's own functions,
// variables and fields are resolved, which is what the walk follows).
type source struct {
	info     *types.Info
	decls    map[*types.Func]*ast.FuncDecl
	codeOf   map[*types.Var]Code // the package's *Error variables
	limitErr map[*types.Var]Code // the limits fields' 429s
	handlers map[string]*types.Func
}

type emptyImporter struct{}

func (emptyImporter) Import(p string) (*types.Package, error) {
	pkg := types.NewPackage(p, path.Base(p))
	pkg.MarkComplete()
	return pkg, nil
}

func loadSource(t *testing.T) *source {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, de := range entries {
		if n := de.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			f, err := parser.ParseFile(fset, n, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: emptyImporter{}, Error: func(error) {}} // the imports' errors are expected
	pkg, _ := conf.Check("auth", fset, files, info)
	s := &source{info: info, decls: map[*types.Func]*ast.FuncDecl{}, codeOf: map[*types.Var]Code{},
		limitErr: map[*types.Var]Code{}, handlers: map[string]*types.Func{}}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if fn, ok := info.Defs[d.Name].(*types.Func); ok {
					s.decls[fn] = d
				}
			case *ast.GenDecl:
				s.genDecl(t, d)
			}
		}
	}
	// The limits fields and the errors newLimits gives them:
	// {&ls.loginIP, limitSpec{"login:ip", ErrTooManyLogins, ...}}.
	newLimits, _ := pkg.Scope().Lookup("newLimits").(*types.Func)
	if s.decls[newLimits] == nil {
		t.Fatal("newLimits not found")
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
			field, _ := info.Uses[sel.Sel].(*types.Var)
			errVar, _ := info.Uses[errID].(*types.Var)
			if field != nil && s.codeOf[errVar] != "" {
				s.limitErr[field] = s.codeOf[errVar]
			}
		}
		return true
	})
	if len(s.limitErr) == 0 {
		t.Fatal("no limit of newLimits read")
	}
	return s
}

// genDecl reads the *Error variables (def(status, "code", text)) and the
// routes table ({http.MethodPost, "/api/...", handler, ...}).
func (s *source) genDecl(t *testing.T, d *ast.GenDecl) {
	for _, spec := range d.Specs {
		vs, ok := spec.(*ast.ValueSpec)
		if !ok {
			continue
		}
		for i, name := range vs.Names {
			if i >= len(vs.Values) {
				continue
			}
			v, _ := s.info.Defs[name].(*types.Var)
			switch val := vs.Values[i].(type) {
			case *ast.CallExpr:
				if fn, ok := val.Fun.(*ast.Ident); ok && fn.Name == "def" && len(val.Args) == 3 {
					lit, _ := val.Args[1].(*ast.BasicLit)
					code, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatalf("%s: %v", name.Name, err)
					}
					s.codeOf[v] = Code(code)
				}
			case *ast.CompositeLit:
				if name.Name != "routes" {
					continue
				}
				for _, el := range val.Elts {
					rt := el.(*ast.CompositeLit)
					method := strings.ToUpper(strings.TrimPrefix(rt.Elts[0].(*ast.SelectorExpr).Sel.Name, "Method"))
					pattern, err := strconv.Unquote(rt.Elts[1].(*ast.BasicLit).Value)
					if err != nil {
						t.Fatal(err)
					}
					fn, _ := s.info.Uses[rt.Elts[2].(*ast.Ident)].(*types.Func)
					s.handlers[method+" "+pattern] = fn
				}
			}
		}
	}
}

// reach returns the codes of the conditions fn can reach through the
// package's own functions.
func (s *source) reach(fn *types.Func) map[Code]bool {
	out := map[Code]bool{}
	seen := map[*types.Func]bool{}
	var walk func(fn *types.Func)
	walk = func(fn *types.Func) {
		d := s.decls[fn]
		if seen[fn] || d == nil || d.Body == nil || notFollowed[fn.Name()] {
			return
		}
		seen[fn] = true
		ast.Inspect(d.Body, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			switch o := s.info.Uses[id].(type) {
			case *types.Func:
				walk(o)
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
	walk(fn)
	return out
}
