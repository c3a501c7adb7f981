package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// One go vet step with this tool reports what go vet reports on its own
// and what workqueuedone reports: a printf mistake and a stall in the same
// function, both named, and go vet fails.
func TestVetAndWorkqueuedoneInOneStep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the tool and runs go vet over client-go")
	}
	tool := filepath.Join(t.TempDir(), "vet-workqueuedone")
	if out, err := exec.Command("go", "build", "-o", tool, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	vet := exec.Command("go", "vet", "-vettool="+tool, "./vetbeside")
	vet.Dir = "../../passes/workqueuedone/testdata"
	out, err := vet.CombinedOutput()
	said := string(out)
	if err == nil {
		t.Fatalf("go vet -vettool=vet-workqueuedone passed over vetbeside; it should report two problems:\n%s", said)
	}
	for _, want := range []string{
		"vetbeside.go:20:25: fmt.Printf format %d has arg key of wrong type string",
		"vetbeside.go:22:2: forget: q.Forget(key) on line 21 resets the backoff but is not Done",
	} {
		if !strings.Contains(said, want) {
			t.Errorf("go vet -vettool=vet-workqueuedone did not say %q; it said:\n%s", want, said)
		}
	}

	// Turned off by its flag, workqueuedone is silent and vet's own check
	// still reports.
	off := exec.Command("go", "vet", "-vettool="+tool, "-workqueuedone=false", "./vetbeside")
	off.Dir = vet.Dir
	out, _ = off.CombinedOutput()
	if said := string(out); strings.Contains(said, "forget:") || !strings.Contains(said, "fmt.Printf format %d") {
		t.Errorf("with -workqueuedone=false, go vet should report only the printf mistake; it said:\n%s", said)
	}
}
