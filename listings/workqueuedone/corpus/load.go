package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
	modulepath "golang.org/x/mod/module"
	"golang.org/x/tools/go/packages"
)

// The corpus: each module at the version go.mod pins, and the part of it
// that is read (client-go's controllers are its examples).
var corpus = []moduleSpec{
	{path: "k8s.io/kubernetes"},
	{path: "k8s.io/client-go", under: "examples"},
	{path: "k8s.io/sample-controller"},
	{path: "k8s.io/apiserver"},
	{path: "k8s.io/apiextensions-apiserver"},
	{path: "k8s.io/kube-aggregator"},
	{path: "sigs.k8s.io/controller-runtime"},
}

var queueImports = []string{
	`"k8s.io/client-go/util/workqueue"`,
	`"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"`,
}

// A moduleSpec names a module to read: its path, its version (empty in
// the book's corpus, whose go.mod pins it), and the folder of it that is
// read (empty: all of it).
type moduleSpec struct {
	path, version, under string
}

func (s moduleSpec) String() string {
	if s.under == "" {
		return s.path + "@" + s.version
	}
	return s.path + "@" + s.version + " " + s.under
}

type module struct {
	path, version string
	dir           string   // its root: reports and mutants name files relative to it
	goDir         string   // where go commands over its packages run ("": here, the book's corpus)
	packages      []string // import paths of the packages that import a queue
	mains         map[string]bool
	mainImports   []string            // what the main packages import, for go.mod
	loaded        []*packages.Package // packages, in the order of packages
}

// moduleSpecs is the modules named by -modules FILE and by the arguments,
// in that order; none means the book's corpus.
func moduleSpecs(file string, args []string) ([]moduleSpec, error) {
	var specs []moduleSpec
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			line, _, _ := strings.Cut(sc.Text(), "#")
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			if len(fields) > 2 {
				return nil, fmt.Errorf("%s:%d: want module@version and at most one folder, not %q", file, n, strings.TrimSpace(line))
			}
			s, err := parseSpec(fields[0])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", file, n, err)
			}
			if len(fields) == 2 {
				s.under = filepath.Clean(fields[1])
				if !filepath.IsLocal(s.under) {
					return nil, fmt.Errorf("%s:%d: the folder %q is not inside the module", file, n, fields[1])
				}
			}
			specs = append(specs, s)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		if len(specs) == 0 {
			return nil, fmt.Errorf("%s names no module", file)
		}
	}
	for _, a := range args {
		s, err := parseSpec(a)
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	return specs, nil
}

func parseSpec(s string) (moduleSpec, error) {
	path, version, ok := strings.Cut(s, "@")
	if !ok || path == "" || version == "" {
		return moduleSpec{}, fmt.Errorf("%q is not module@version", s)
	}
	if err := modulepath.CheckPath(path); err != nil {
		return moduleSpec{}, err
	}
	return moduleSpec{path: path, version: version}, nil
}

// corpusModules finds each module of the book's corpus in the module cache,
// at the version this directory's go.mod pins, and the packages of it that
// import a queue package.
func corpusModules() ([]*module, error) {
	var out []*module
	for _, c := range corpus {
		cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", c.path)
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go list -m %s (run go mod download first): %v", c.path, err)
		}
		version, dir, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		if dir == "" {
			return nil, fmt.Errorf("%s %s is not in the module cache: run go mod download", c.path, version)
		}
		m := &module{path: c.path, version: version, dir: dir}
		if err := findQueuePackages(m, c.under); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// findQueuePackages walks m.dir/under and sets m.packages to the packages
// whose non-test files import a queue package (and what main packages
// import, for writeImports).
func findQueuePackages(m *module, under string) error {
	m.mains = map[string]bool{}
	root := filepath.Join(m.dir, under)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			// A folder with a go.mod of its own is another module (the
			// module zip leaves it out; a scratch copy may not).
			if p != m.dir {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return nil // not Go this toolchain reads; go list says more
		}
		if f.Name.Name == "main" {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if strings.Contains(strings.Split(path, "/")[0], ".") {
					m.mainImports = append(m.mainImports, path)
				}
			}
		}
		for _, imp := range f.Imports {
			for _, q := range queueImports {
				if imp.Path.Value == q {
					rel, _ := filepath.Rel(m.dir, filepath.Dir(p))
					pkg := m.path
					if rel != "." {
						pkg += "/" + filepath.ToSlash(rel)
					}
					if len(m.packages) == 0 || m.packages[len(m.packages)-1] != pkg {
						m.packages = append(m.packages, pkg)
					}
					if f.Name.Name == "main" {
						m.mains[pkg] = true
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	m.packages = dedupe(m.packages)
	m.mainImports = dedupe(m.mainImports)
	return nil
}

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// writeImports writes the blank imports that make go mod tidy keep every
// module the corpus packages need (behind a build tag: nothing builds it).
func writeImports(mods []*module) error {
	var b strings.Builder
	b.WriteString("//go:build corpusimports\n\n// Code generated by go run . -imports; DO NOT EDIT.\n\n")
	b.WriteString("// The corpus packages, so that go mod tidy keeps what they need.\npackage main\n\nimport (\n")
	var paths []string
	for _, m := range mods {
		for _, p := range m.packages {
			if !m.mains[p] {
				paths = append(paths, p)
			}
		}
		// A main package cannot be imported: what it imports can.
		paths = append(paths, m.mainImports...)
	}
	for _, p := range dedupe(paths) {
		fmt.Fprintf(&b, "\t_ %q\n", p)
	}
	b.WriteString(")\n")
	return os.WriteFile("imports.go", []byte(b.String()), 0o644)
}

// loadTogether loads the book's corpus in one build from this directory's
// go.mod, which pins every module (and replaces Kubernetes' staging
// modules with their published versions, which is what lets Kubernetes
// load at all: its own go.mod replaces them with folders its module zip
// leaves out).
func loadTogether(mods []*module) error {
	var all []string
	for _, m := range mods {
		all = append(all, m.packages...)
	}
	pkgs, err := load(all, "", nil)
	if err != nil {
		return err
	}
	byPath := map[string]*packages.Package{}
	for _, p := range pkgs {
		byPath[p.PkgPath] = p
	}
	for _, m := range mods {
		for _, path := range m.packages {
			if byPath[path] == nil {
				return fmt.Errorf("%s was not loaded", path)
			}
			m.loaded = append(m.loaded, byPath[path])
		}
	}
	return nil
}

// load type-checks the packages from source, in dir (empty: here) with
// env added to the environment; what they import comes from export data,
// as go vet reads it.
func load(paths []string, dir string, env []string) ([]*packages.Package, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
			packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo |
			packages.NeedTypesSizes | packages.NeedImports | packages.NeedModule,
		Dir: dir,
	}
	if env != nil {
		cfg.Env = append(os.Environ(), env...)
	}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		return nil, err
	}
	// The errors of the packages and of what they import, go list's
	// first: a type error is often one of its consequences.
	var listed, typed []string
	seen := map[string]bool{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			msg := fmt.Sprintf("%s: %v", p.PkgPath, e)
			if dir != "" {
				msg = strings.ReplaceAll(msg, dir+string(filepath.Separator), "")
			}
			if seen[msg] {
				continue
			}
			seen[msg] = true
			if e.Kind == packages.TypeError {
				typed = append(typed, msg)
			} else {
				listed = append(listed, msg)
			}
		}
	})
	if len(listed) > 0 {
		return nil, &loadError{"go could not list a package or what it imports", strings.Join(append(listed, typed...), "\n")}
	}
	if len(typed) > 0 {
		return nil, &loadError{"a package does not type-check, so nothing was analyzed", strings.Join(typed, "\n")}
	}
	// What they import is export data, not syntax: the analyzers cannot run
	// on it, so the checker must not try (no facts come from it).
	for _, p := range pkgs {
		p.Imports = map[string]*packages.Package{}
	}
	return pkgs, nil
}

// A loadError is why a module did not load, and what go said.
type loadError struct {
	reason string
	goSaid string
}

// goLines is how many lines of what go said a loadError shows: the first
// ones name the cause; the rest is usually the same cause again.
const goLines = 8

func (e *loadError) Error() string {
	lines := strings.Split(strings.TrimSpace(e.goSaid), "\n")
	more := ""
	if len(lines) > goLines {
		more = fmt.Sprintf("\n    (and %d more lines)", len(lines)-goLines)
		lines = lines[:goLines]
	}
	return fmt.Sprintf("%s; go said:\n    %s%s", e.reason, strings.Join(lines, "\n    "), more)
}

// workDir is the folder the -modules copies go in: dir, made if need be
// and kept, or a temporary one that cleanup removes.
func workDir(dir string) (string, func(), error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, err
		}
		abs, err := filepath.Abs(dir)
		return abs, func() {}, err
	}
	tmp, err := os.MkdirTemp("", "corpus-modules-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// goEnv is the environment go runs in for a module loaded as its own
// root: its go.mod as it is, go.sum lines it lacks fetched (the copy is
// ours to write), and no go.work around it.
var goEnv = []string{"GOFLAGS=-mod=mod", "GOWORK=off"}

// loadAlone fetches the module s names into the module cache, copies it
// under work (the module cache is read-only, and go may add to go.mod and
// go.sum), and loads its queue packages there as the main module. An
// error names the module and says why it did not load.
func loadAlone(s moduleSpec, work string) (*module, error) {
	fail := func(err error) (*module, error) {
		return nil, fmt.Errorf("%s does not load: %w", s, err)
	}
	dl, err := download(s, work)
	if err != nil {
		return fail(err)
	}
	escaped, err := modulepath.EscapePath(dl.Path)
	if err != nil {
		return fail(err)
	}
	root := filepath.Join(work, escaped+"@"+dl.Version)
	if err := os.RemoveAll(root); err != nil {
		return fail(err)
	}
	if err := copyTree(dl.Dir, root); err != nil {
		return fail(fmt.Errorf("copying %s: %v", dl.Dir, err))
	}
	// A module without a go.mod gets the one the proxy made for it.
	if _, err := os.Stat(filepath.Join(root, "go.mod")); errors.Is(err, fs.ErrNotExist) {
		b, err := os.ReadFile(dl.GoMod)
		if err == nil {
			err = os.WriteFile(filepath.Join(root, "go.mod"), b, 0o644)
		}
		if err != nil {
			return fail(err)
		}
	}
	m := &module{path: dl.Path, version: dl.Version, dir: root, goDir: root}
	if st, err := os.Stat(filepath.Join(root, s.under)); err != nil || !st.IsDir() {
		return fail(fmt.Errorf("it has no folder %s", s.under))
	}
	if err := findQueuePackages(m, s.under); err != nil {
		return fail(err)
	}
	if len(m.packages) == 0 {
		return m, nil // a true zero: nothing in it imports a queue
	}
	pkgs, err := load(m.packages, root, goEnv)
	if err != nil {
		var le *loadError
		if !errors.As(err, &le) {
			le = &loadError{"go could not list its packages", err.Error()}
		}
		if why := missingReplacements(root); why != "" {
			le.reason = why
		}
		return fail(le)
	}
	byPath := map[string]*packages.Package{}
	for _, p := range pkgs {
		byPath[p.PkgPath] = p
	}
	for _, path := range m.packages {
		if byPath[path] == nil {
			return fail(fmt.Errorf("go did not list %s", path))
		}
		m.loaded = append(m.loaded, byPath[path])
	}
	return m, nil
}

// downloaded is what go mod download -json says of a module.
type downloaded struct {
	Path, Version, Dir, GoMod, Error string
}

// download fetches s into the module cache, from an empty folder so that
// no go.mod around decides anything.
func download(s moduleSpec, work string) (*downloaded, error) {
	empty, err := os.MkdirTemp(work, "download-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(empty)
	cmd := exec.Command("go", "mod", "download", "-json", s.path+"@"+s.version)
	cmd.Dir = empty
	cmd.Env = append(os.Environ(), goEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var dl downloaded
	if err := json.Unmarshal(out, &dl); err != nil {
		return nil, &loadError{"go mod download failed", stderr.String() + string(out)}
	}
	if dl.Error != "" || runErr != nil || dl.Dir == "" {
		return nil, &loadError{"go mod download failed", dl.Error + "\n" + stderr.String()}
	}
	return &dl, nil
}

// missingReplacements says which folders the go.mod in root replaces
// modules with but are not there: a module zip never holds a nested module
// (Kubernetes' go.mod replaces k8s.io/api with ./staging/src/k8s.io/api),
// so such a module cannot be loaded as its own root from the proxy. It
// returns "" when every folder is there.
func missingReplacements(root string) string {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return ""
	}
	f, err := modfile.Parse("go.mod", b, nil)
	if err != nil {
		return ""
	}
	var missing []string
	for _, r := range f.Replace {
		if r.New.Version != "" {
			continue // a module, not a folder
		}
		dir := r.New.Path
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
			missing = append(missing, fmt.Sprintf("%s with %s", r.Old.Path, r.New.Path))
		}
	}
	switch len(missing) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("its go.mod replaces %s, a folder that is not in the module zip", missing[0])
	}
	return fmt.Sprintf("its go.mod replaces %d modules with folders that are not in the module zip (a nested module never is), the first %s",
		len(missing), missing[0])
}

// copyTree copies the files under from to to, writable (the module cache
// is read-only, and go may write go.mod and go.sum in the copy).
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil // a module zip holds regular files only
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		dst, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(dst, src); err != nil {
			dst.Close()
			return err
		}
		return dst.Close()
	})
}
