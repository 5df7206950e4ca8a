package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// rootLayers is the map of the root package's files in its doc.go, top
// layer first: a file may use names declared in files of its own layer or
// below, never above. A file of the package that is not placed here
// fails the test, so a new one is placed on purpose.
var rootLayers = [][]string{
	{"start.go"},
	{"admin.go", "admin_cluster.go", "admin_faults.go", "admin_inspect.go", "admin_seed.go"},
	{"seed.go", "faults.go", "inspect.go", "console.go", "cluster.go", "lock_unix.go", "lock_other.go"},
	{"minikafka.go"},
	{"schemaregistry.go", "http.go", "metrics.go"},
	{"config.go"},
	{"options.go"},
	{"inprocess.go", "httpserve.go", "storagefaults.go", "listeners.go"},
	{"doc.go"},
}

// uses is one file's use of a name another file declares.
type uses struct{ from, to, name string }

// rootFileUses lists, for the package in dir, which non-test file uses a
// package-level name declared in another. It reads syntax only: a name
// the file does not declare itself (the parser's unresolved identifiers)
// that another file declares at package level is a use of that file.
func rootFileUses(dir string) ([]uses, []string, error) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, nil, err
	}
	files := map[string]*ast.File{}
	declaredIn := map[string]string{}
	var names []string
	for _, p := range paths {
		base := filepath.Base(p)
		if strings.HasSuffix(base, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return nil, nil, err
		}
		files[base] = f
		names = append(names, base)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name != "init" {
					declaredIn[d.Name.Name] = base
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						declaredIn[s.Name.Name] = base
					case *ast.ValueSpec:
						for _, n := range s.Names {
							declaredIn[n.Name] = base
						}
					}
				}
			}
		}
	}
	var out []uses
	for _, base := range names {
		seen := map[string]bool{}
		for _, id := range files[base].Unresolved {
			to, ok := declaredIn[id.Name]
			if !ok || to == base || seen[id.Name] {
				continue
			}
			seen[id.Name] = true
			out = append(out, uses{base, to, id.Name})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return fmt.Sprint(out[i]) < fmt.Sprint(out[j])
	})
	return out, names, nil
}

// TestRootFileLayers holds the root package to the file map in its doc.go.
func TestRootFileLayers(t *testing.T) {
	root := moduleRoot(t)
	layer := map[string]int{}
	for i, files := range rootLayers {
		for _, f := range files {
			layer[f] = i
		}
	}
	us, names, err := rootFileUses(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, ok := layer[n]; !ok {
			t.Errorf("%s is not placed in rootLayers (and the map in doc.go)", n)
		}
	}
	if len(us) < 50 {
		// The root package's files use each other hundreds of times: a
		// handful means the walk is broken and the test proves nothing.
		t.Fatalf("only %d uses across the root package's files found", len(us))
	}
	for _, u := range us {
		lf, lt := layer[u.from], layer[u.to]
		if _, ok := layer[u.to]; ok && lt < lf {
			t.Errorf("%s uses %s of %s, a file above it (see the file map in doc.go)", u.from, u.name, u.to)
		}
	}
}
