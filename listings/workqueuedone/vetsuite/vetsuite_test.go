package vetsuite

import (
	"go/parser"
	"go/token"
	"os"
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

// The analyzers are also the same code: this module requires exactly the
// x/tools that the installed Go vendors for cmd/vet. A vet tool built here
// then writes the same vet output as go vet for every package (x/tools
// from v0.50.0 on also writes each package's types into it, which every
// later run hashes), so it costs a CI job what workqueuedone adds and no
// more. An upgrade of either fails here.
func TestSameXToolsAsGoVet(t *testing.T) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	modules, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "src/cmd/vendor/modules.txt"))
	if err != nil {
		t.Fatal(err)
	}
	vendored := ""
	for _, line := range strings.Split(string(modules), "\n") {
		if v, ok := strings.CutPrefix(line, "# golang.org/x/tools "); ok {
			vendored = strings.TrimSpace(v)
		}
	}
	if vendored == "" {
		t.Fatal("the installed Go vendors no golang.org/x/tools for cmd/vet")
	}
	ours, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "golang.org/x/tools").Output()
	if err != nil {
		t.Fatalf("go list -m golang.org/x/tools: %v", err)
	}
	if got := strings.TrimSpace(string(ours)); got != vendored {
		t.Errorf("this module builds with golang.org/x/tools %s; go vet of the installed Go vendors %s: "+
			"go get golang.org/x/tools@%s", got, vendored, vendored)
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
