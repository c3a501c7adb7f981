package vetsuite

import (
	"bytes"
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

// The list is go vet's own: the same analysis passes that cmd/vet of the
// installed Go runs, no more and no fewer. Up to Go 1.26 cmd/vet/main.go
// imports them itself; from Go 1.27 it runs x/tools' suite/vet, whose
// vendored copy lists them. A Go release that adds one fails here, not
// silently in a reader's CI.
func TestSameAsGoVet(t *testing.T) {
	goroot := goEnv(t, "GOROOT")
	main := filepath.Join(goroot, "src/cmd/vet/main.go")
	vet := passes(t, main)
	if len(vet) == 0 && importsPath(t, main, suite) {
		vet = passes(t, filepath.Join(goroot, "src/cmd/vendor", suite, "vet.go"))
	}
	if len(vet) == 0 {
		t.Fatalf("%s imports no analysis passes and not %s: where does this Go's go vet list them?", main, suite)
	}
	ours := passes(t, "vetsuite.go")
	if !slices.Equal(ours, vet) {
		t.Errorf("vetsuite.go imports the passes %v\ngo vet of %s runs %v", ours, goEnv(t, "GOVERSION"), vet)
	}
	if len(Analyzers) != len(ours) {
		t.Errorf("Analyzers holds %d analyzers for %d imported passes", len(Analyzers), len(ours))
	}
}

// suite is the package that lists go vet's analyzers from Go 1.27 on.
const suite = "golang.org/x/tools/go/analysis/suite/vet"

// The analyzers are also the same code: this module builds with exactly
// the x/tools that the installed Go vendors for cmd/vet, either because
// go.mod pins it (Go 1.26.8) or because the go.mod it is tested with
// (cmd/build-vet-workqueuedone -modfile) replaces x/tools with a copy in
// which every file Go vendors is Go's own. A vet tool built either way
// writes the same vet output as go vet for every package (x/tools from
// v0.50.0 on also writes each package's types into it, which every later
// run hashes), so it costs a CI job what workqueuedone adds and no more.
// An upgrade of either fails here.
func TestSameXToolsAsGoVet(t *testing.T) {
	goroot := goEnv(t, "GOROOT")
	modules, err := os.ReadFile(filepath.Join(goroot, "src/cmd/vendor/modules.txt"))
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
	// Tested with a go.mod other than the module's (go test -modfile=FILE),
	// the test is told FILE in WORKQUEUEDONE_MODFILE, as cargo xtask does:
	// the go command passes -modfile to no command a test runs.
	list := []string{"list", "-m", "-f", "{{.Version}} {{with .Replace}}{{.Path}}{{end}}"}
	if modfile := os.Getenv("WORKQUEUEDONE_MODFILE"); modfile != "" {
		list = append(list, "-modfile="+modfile)
	}
	ours, err := exec.Command("go", append(list, "golang.org/x/tools")...).Output()
	if err != nil {
		t.Fatalf("go list -m golang.org/x/tools: %v", err)
	}
	version, replaced, _ := strings.Cut(strings.TrimSpace(string(ours)), " ")
	if replaced == "" {
		if version != vendored {
			t.Errorf("this module builds with golang.org/x/tools %s; go vet of %s vendors %s: "+
				"WORKQUEUEDONE_MODFILE=FILE go test -modfile=FILE ./... after go run ./cmd/build-vet-workqueuedone -modfile FILE",
				version, goEnv(t, "GOVERSION"), vendored)
		}
		return
	}
	// Replaced: by the copy build-vet-workqueuedone makes, whose every
	// vendored file is the installed Go's.
	note, err := os.ReadFile(filepath.Join(replaced, "VENDORED-BY-GO"))
	if err != nil || !strings.HasPrefix(string(note), "golang.org/x/tools "+vendored+":") {
		t.Fatalf("golang.org/x/tools is replaced by %s, which is not Go's vendored %s (%v): %s", replaced, vendored, err, note)
	}
	vendor := filepath.Join(goroot, "src/cmd/vendor/golang.org/x/tools")
	compared := 0
	err = filepath.WalkDir(vendor, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(vendor, path)
		want, _ := os.ReadFile(path)
		got, err := os.ReadFile(filepath.Join(replaced, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s in %s is not go vet's own copy", rel, replaced)
		}
		compared++
		return nil
	})
	if err != nil || compared == 0 {
		t.Fatalf("comparing with %s: %v (%d files)", vendor, err, compared)
	}
}

func goEnv(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// importsPath says whether a Go file imports a package.
func importsPath(t *testing.T, path, pkg string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range f.Imports {
		if p, _ := strconv.Unquote(spec.Path.Value); p == pkg {
			return true
		}
	}
	return false
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
	return found
}
