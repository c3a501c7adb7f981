package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReleaseBase(t *testing.T) {
	for v, want := range map[string]string{
		"v0.45.1-0.20260917185718-3dd9077b8066": "v0.45.0",
		"v0.39.1-0.20260527181557-0f52e3809b35": "v0.39.0",
		"v0.45.0":                               "v0.45.0",
		"v0.45.0-0.20260917185718-3dd9077b8066": "", // before v0.45.0: no release under it
		"v0.45.0-rc.1":                          "",
		"master":                                "",
	} {
		got, ok := releaseBase(v)
		if got != want || ok != (want != "") {
			t.Errorf("releaseBase(%q) = %q, %v; want %q", v, got, ok, want)
		}
	}
}

// A Go whose go vet vendors an x/tools this module does not pin, and whose
// release base the module proxy does not serve, stops the build with both
// versions named and the Go releases to use instead; it never builds on
// another x/tools.
func TestStopsNamingBothVersions(t *testing.T) {
	if testing.Short() {
		t.Skip("asks the module proxy for a version it does not have")
	}
	module, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := pinnedXTools(filepath.Join(module, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	future := "v0.99.1-0.20991231000000-abcdefabcdef"
	err = overlay(module, filepath.Join(t.TempDir(), "go.mod"), t.TempDir(), "go1.99.0", future, pinned)
	if err == nil {
		t.Fatal("built on an x/tools the module proxy does not serve")
	}
	for _, want := range []string{"go1.99.0's go vet vendors golang.org/x/tools " + future, "pins " + pinned, "v0.99.0", "Go 1.26.8", "GOTOOLCHAIN=go1.27.3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	left := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "forget-is-not-delete", "x-tools@"+future)
	if _, err := os.Stat(left); err == nil {
		t.Errorf("left a copy of x/tools behind after stopping: %s", left)
	}
}
