// Command build-vet-workqueuedone builds cmd/vet-workqueuedone for the Go
// that runs it, so that go vet's own analyzers in the vet tool are the code
// that Go's go vet runs. The CI step runs it, in your module's root:
//
//	bash third_party/workqueuedone/your-module/ci.sh
//
// On its own, in this module: go run ./cmd/build-vet-workqueuedone -o FILE.
//
// Each Go release vendors one golang.org/x/tools for cmd/vet, named in
// $(go env GOROOT)/src/cmd/vendor/modules.txt. When it is the version this
// module's go.mod pins (Go 1.26.8's), the tool is built as the module
// stands. When it is another, the module proxy often does not serve it (a
// pseudo-version, as Go 1.27.3's is), so the tool is built
// on the x/tools release that version starts from, with every package
// Go vendors replaced by Go's own copy: vet's analyzers then are, file for
// file, those of go vet, and workqueuedone's go/ssa comes from that
// release. The copy is kept in the user cache folder, one per vendored
// version, so that every build for one Go is the same binary and go vet's
// cache keeps its results. When that release cannot be had either, it
// stops and names both versions; it never builds a vet tool on an x/tools
// other than the one the running Go vets with.
//
// With -modfile FILE it writes that go.mod (and FILE's .sum beside it) and
// builds nothing, for go test -modfile=FILE in this module.
//
// It is tested on Go 1.26.8 and Go 1.27.3.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

const xtools = "golang.org/x/tools"

func main() {
	out := flag.String("o", "", "build the vet tool into this `file`")
	modfile := flag.String("modfile", "", "write the go.mod the vet tool builds with for this Go into this `file` (ending in .mod), and build nothing")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: go run ./cmd/build-vet-workqueuedone -o FILE | -modfile FILE.mod\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if (*out == "") == (*modfile == "") || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*out, *modfile); err != nil {
		fmt.Fprintf(os.Stderr, "build-vet-workqueuedone: %v\n", err)
		os.Exit(1)
	}
}

func run(out, modfile string) error {
	env, err := goEnv("GOROOT", "GOVERSION", "GOMOD")
	if err != nil {
		return err
	}
	goroot, goversion := env["GOROOT"], env["GOVERSION"]
	module := filepath.Dir(env["GOMOD"])
	if env["GOMOD"] == "" || env["GOMOD"] == os.DevNull {
		return errors.New("run it in the analyzer's module: go -C third_party/workqueuedone run ./cmd/build-vet-workqueuedone")
	}
	vendored, err := vendoredXTools(goroot)
	if err != nil {
		return fmt.Errorf("%s: %v", goversion, err)
	}
	pinned, err := pinnedXTools(filepath.Join(module, "go.mod"))
	if err != nil {
		return err
	}

	var build []string // the flags that choose the go.mod to build with
	if vendored != pinned {
		file := modfile
		if file == "" {
			dir, err := os.MkdirTemp("", "vet-workqueuedone-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			file = filepath.Join(dir, "go.mod")
		}
		if err := overlay(module, file, goroot, goversion, vendored, pinned); err != nil {
			return err
		}
		build = []string{"-modfile=" + file}
	} else if modfile != "" {
		// The module as it stands: its own go.mod and go.sum, copied.
		if err := copyModFile(module, modfile); err != nil {
			return err
		}
	}
	if out == "" {
		return nil
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	args := append([]string{"build", "-trimpath"}, build...)
	return goCmd(module, append(args, "-o", abs, "./cmd/vet-workqueuedone")...)
}

// overlay writes file, a go.mod for this module whose x/tools is the
// release vendored starts from, replaced by a copy of it in which every
// file Go vendors is Go's own.
func overlay(module, file, goroot, goversion, vendored, pinned string) error {
	if !strings.HasSuffix(file, ".mod") {
		return fmt.Errorf("-modfile %s: the file must end in .mod", file)
	}
	base, ok := releaseBase(vendored)
	stop := func(why error) error {
		return fmt.Errorf("%s's go vet vendors %s %s, and this analyzer pins %s; %v.\n"+
			"Build it with a Go it is tested on: Go 1.26.8, or Go 1.27.3 (GOTOOLCHAIN=go1.27.3)",
			goversion, xtools, vendored, pinned, why)
	}
	if !ok {
		return stop(fmt.Errorf("%s is neither a release nor a pseudo-version after one", vendored))
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return stop(err)
	}
	dir := filepath.Join(cache, "forget-is-not-delete", "x-tools@"+vendored)
	marker := filepath.Join(dir, "VENDORED-BY-GO")
	if _, err := os.Stat(marker); err != nil {
		src, err := download(module, xtools+"@"+base)
		if err != nil {
			return stop(fmt.Errorf("the module proxy does not serve %s %s, the release it starts from: %v", xtools, base, err))
		}
		// Built beside, then renamed: an interrupted copy is never taken
		// for a whole one.
		partial := dir + ".partial"
		os.RemoveAll(partial)
		if err := copyTree(src, partial); err != nil {
			return err
		}
		vendor := filepath.Join(goroot, "src/cmd/vendor", xtools)
		if err := copyTree(vendor, partial); err != nil {
			return err
		}
		note := fmt.Sprintf("%s %s: the files of %s vendored by %s in %s, over %s %s\n",
			xtools, vendored, xtools, goversion, vendor, xtools, base)
		if err := os.WriteFile(filepath.Join(partial, "VENDORED-BY-GO"), []byte(note), 0o644); err != nil {
			return err
		}
		os.RemoveAll(dir)
		if err := os.Rename(partial, dir); err != nil {
			return err
		}
	}
	if err := copyModFile(module, file); err != nil {
		return err
	}
	if err := goCmd(module, "get", "-modfile="+file, xtools+"@"+base); err != nil {
		return stop(err)
	}
	if err := goCmd(module, "mod", "edit", "-replace="+xtools+"="+dir, file); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "build-vet-workqueuedone: %s vets with %s %s, which the module proxy may not serve: "+
		"built on %s with Go's own copy of every package it vendors (%s)\n", goversion, xtools, vendored, base, dir)
	return nil
}

// copyModFile copies the module's go.mod to file (a name ending in .mod)
// and its go.sum beside it, as -modfile reads them.
func copyModFile(module, file string) error {
	for _, ext := range []string{".mod", ".sum"} {
		data, err := os.ReadFile(filepath.Join(module, "go"+ext))
		if err != nil {
			return err
		}
		if err := os.WriteFile(strings.TrimSuffix(file, ".mod")+ext, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

var pseudo = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)-0\.\d{14}-[0-9a-f]{12}$`)
var release = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

// releaseBase is the release a version starts from: itself for a release,
// vX.Y.Z for a pseudo-version vX.Y.(Z+1)-0.DATE-HASH.
func releaseBase(v string) (string, bool) {
	if release.MatchString(v) {
		return v, true
	}
	m := pseudo.FindStringSubmatch(v)
	if m == nil {
		return "", false
	}
	patch, _ := strconv.Atoi(m[3])
	if patch == 0 {
		return "", false
	}
	return fmt.Sprintf("v%s.%s.%d", m[1], m[2], patch-1), true
}

// vendoredXTools is the x/tools version Go vendors for cmd/vet.
func vendoredXTools(goroot string) (string, error) {
	path := filepath.Join(goroot, "src/cmd/vendor/modules.txt")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read which x/tools go vet vendors: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "# "+xtools+" "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s names no %s: go vet of this Go is not built on it", path, xtools)
}

// pinnedXTools is the x/tools version a go.mod requires.
func pinnedXTools(gomod string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) >= 2 && fields[0] == xtools {
			return fields[1], nil
		}
	}
	return "", fmt.Errorf("%s requires no %s", gomod, xtools)
}

// download is the module cache folder of mod@version.
func download(module, modVersion string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", modVersion)
	cmd.Dir = module
	cmd.Env = ownEnv()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(stdout.Bytes(), &info); jerr == nil && info.Error != "" {
		return "", errors.New(info.Error)
	}
	if err != nil {
		return "", err
	}
	return info.Dir, nil
}

// copyTree copies every file under from into to, writable.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

func goEnv(names ...string) (map[string]string, error) {
	out, err := exec.Command("go", append([]string{"env", "-json"}, names...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %v", err)
	}
	env := map[string]string{}
	return env, json.Unmarshal(out, &env)
}

func goCmd(dir string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = ownEnv()
	// Quiet when it works (go get names every upgrade it makes, in a
	// go.mod no one reads); all of it when it does not.
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return nil
}

// ownEnv is the environment of the go commands this one runs: in this
// module alone, whatever go.work or GOFLAGS the caller's module sets.
func ownEnv() []string {
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=")
}
