package minikafka_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The package doc promises the whole configuration and control surface in
// one place (go doc github.com/minikafka/minikafka). These tests hold it to
// that: an option or Broker method added without its line in doc.go fails
// here, and so does a line naming something that no longer exists.

// rootAPI parses the package's non-test files: its package comment, the
// exported With* functions that return an Option, and Start plus the
// exported methods of Broker.
func rootAPI(t *testing.T) (pkgDoc string, options, control []string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			pkgDoc += f.Doc.Text()
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
			}
			switch {
			case fn.Recv == nil && fn.Name.Name == "Start":
				control = append(control, "Start")
			case fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "With") && returnsOption(fn):
				options = append(options, fn.Name.Name)
			case fn.Recv != nil && receiverIs(fn, "Broker"):
				control = append(control, "Broker."+fn.Name.Name)
			}
		}
	}
	if pkgDoc == "" {
		t.Fatal("no package comment")
	}
	return pkgDoc, options, control
}

func returnsOption(fn *ast.FuncDecl) bool {
	r := fn.Type.Results
	if r == nil || len(r.List) != 1 {
		return false
	}
	id, ok := r.List[0].Type.(*ast.Ident)
	return ok && id.Name == "Option"
}

func receiverIs(fn *ast.FuncDecl, typ string) bool {
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.Name == typ
}

// docSection returns the text under the heading "# name" up to the next
// heading.
func docSection(t *testing.T, doc, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n# "+name+"\n")
	if !ok {
		t.Fatalf("package comment has no %q heading", "# "+name)
	}
	sec, _, _ := strings.Cut(rest, "\n# ")
	return sec
}

// listed returns the names that begin a list item ("  - [Name]: ...") in
// sec, failing on a name listed twice.
func listed(t *testing.T, sec string) []string {
	t.Helper()
	item := regexp.MustCompile(`(?m)^\s*- \[([A-Za-z.]+)\]:`)
	var names []string
	for _, m := range item.FindAllStringSubmatch(sec, -1) {
		if slices.Contains(names, m[1]) {
			t.Errorf("%s is listed twice", m[1])
		}
		names = append(names, m[1])
	}
	return names
}

// compare reports what code has and the doc lacks, and the reverse.
func compare(t *testing.T, what string, code, doc []string) {
	t.Helper()
	if len(code) == 0 {
		t.Fatalf("found no %s in the package's files", what)
	}
	for _, n := range code {
		if !slices.Contains(doc, n) {
			t.Errorf("%s %s is missing from the package doc (doc.go): add a line for it", what, n)
		}
	}
	for _, n := range doc {
		if !slices.Contains(code, n) {
			t.Errorf("the package doc lists %s %s, which the package does not have", what, n)
		}
	}
}

func TestPackageDocListsEveryOption(t *testing.T) {
	doc, options, _ := rootAPI(t)
	compare(t, "option", options, listed(t, docSection(t, doc, "Options")))
}

func TestPackageDocListsControlSurface(t *testing.T) {
	doc, _, control := rootAPI(t)
	compare(t, "control method", control, listed(t, docSection(t, doc, "Control surface")))
}
