package vetsuite

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The list is go vet's own: the same analysis passes that cmd/vet/main.go
// of the installed Go imports for its suite, no more and no fewer. A Go
// release that adds one fails here, not silently in a reader's CI.
func TestSameAsGoVet(t *testing.T) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	vet := passes(t, filepath.Join(strings.TrimSpace(string(goroot)), "src/cmd/vet/main.go"))
	ours := passes(t, "vetsuite.go")
	if !slices.Equal(ours, vet) {
		t.Errorf("vetsuite.go imports the passes %v\ngo vet's main.go imports %v", ours, vet)
	}
	if len(Analyzers) != len(ours) {
		t.Errorf("Analyzers holds %d analyzers for %d imported passes", len(Analyzers), len(ours))
	}
}

// passes is the sorted analysis passes a Go file imports.
func passes(t *testing.T, path string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, spec := range f.Imports {
		p, _ := strconv.Unquote(spec.Path.Value)
		if pass, ok := strings.CutPrefix(p, "golang.org/x/tools/go/analysis/passes/"); ok {
			found = append(found, pass)
		}
	}
	slices.Sort(found)
	if len(found) == 0 {
		t.Fatalf("%s imports no analysis passes", path)
	}
	return found
}
