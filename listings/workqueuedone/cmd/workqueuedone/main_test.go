package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

func TestFixArgs(t *testing.T) {
	for _, test := range []struct {
		args  string // split on spaces
		check string // "" when the command is left to singlechecker
	}{
		{"./...", ""},
		{"-fix ./...", "./..."},
		{"--fix ./...", "./..."},
		{"-fix=true ./a ./b", "./a ./b"},
		{"-fix=1 ./...", "./..."},
		{"-fix=false ./...", ""},
		{"-fix -fix=false ./...", ""},
		{"-fix=false -fix ./...", "./..."},
		{"-fix=maybe ./...", ""}, // singlechecker reports the bad value
		{"-fix", ""},             // singlechecker prints the usage
		{"-fix -diff ./...", "-diff ./..."},
		{"-panic=false -fix -c 2 ./...", "-panic=false -c 2 ./..."},
		{"-c 2 -fix ./...", "-c 2 ./..."},
		{"-trace fix -fix ./...", "-trace fix ./..."}, // fix is -trace's file
		{"./... -fix", ""},                            // a package pattern, to the flag package
		{"-fix -- -fix", "-- -fix"},                   // a package after --
		{"-V=full", ""},
		{"-fix -V=full", ""},
		{"-fix -flags", ""},
		{"-fix -help ./...", ""},
		{"-fix /tmp/vet.cfg", ""}, // go vet -fix
		{"-fix -json /tmp/vet.cfg", ""},
	} {
		check, ok := fixArgs(strings.Fields(test.args))
		if got := strings.Join(check, " "); ok != (test.check != "") || got != test.check {
			t.Errorf("fixArgs(%s) = %q, %t; want %q", test.args, got, ok, test.check)
		}
	}
}

// The three things a team sees running workqueuedone -fix ./... in CI:
// a stall the fix mends, a stall it does not, and nothing to do.
func TestFixThenCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and loads client-go")
	}
	dir := t.TempDir()
	command := filepath.Join(dir, "workqueuedone")
	build := exec.Command("go", "build", "-o", command, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// A module that requires the real client-go, as the analyzer's
	// testdata does (run go mod download there first).
	module := filepath.Join(dir, "controllers")
	testdata := filepath.Join("..", "..", "passes", "workqueuedone", "testdata")
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(testdata, name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(module, name), string(data))
	}
	writeFile(t, filepath.Join(module, "nodone", "nodone.go"), worker("nodone", ""))
	writeFile(t, filepath.Join(module, "early", "early.go"), worker("early", earlyReturn))
	writeFile(t, filepath.Join(module, "clean", "clean.go"), worker("clean", deferDone))

	run := func(args ...string) (status int, output string) {
		t.Helper()
		cmd := exec.Command(command, args...)
		cmd.Dir = module
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
			return exit.ExitCode(), out.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, out.String()
	}

	t.Run("the fix mends it", func(t *testing.T) {
		if status, out := run("-fix", "./nodone"); status != 0 || out != "" {
			t.Errorf("workqueuedone -fix ./nodone: exit %d, output %q; want exit 0, no output", status, out)
		}
		got, err := os.ReadFile(filepath.Join(module, "nodone", "nodone.go"))
		if err != nil {
			t.Fatal(err)
		}
		if want := worker("nodone", deferDone); string(got) != want {
			t.Errorf("after -fix, nodone.go is\n%s\nwant\n%s", got, want)
		}
	})

	t.Run("no fix mends it", func(t *testing.T) {
		status, out := run("-fix", "./early")
		// The rest of the message is the analyzer's to word.
		const report = "early.go:11:3: stall: q.Get() on line 6 hands out key"
		if status != 3 || !strings.Contains(out, report) {
			t.Errorf("workqueuedone -fix ./early: exit %d, output %q; want exit 3 and %q", status, out, report)
		}
		got, err := os.ReadFile(filepath.Join(module, "early", "early.go"))
		if err != nil {
			t.Fatal(err)
		}
		if want := worker("early", earlyReturn); string(got) != want {
			t.Errorf("-fix changed early.go:\n%s", got)
		}
	})

	t.Run("nothing to do", func(t *testing.T) {
		if status, out := run("-fix", "./clean"); status != 0 || out != "" {
			t.Errorf("workqueuedone -fix ./clean: exit %d, output %q; want exit 0, no output", status, out)
		}
	})
}

// Lines that worker puts after the shutdown check.
const (
	deferDone   = "\tdefer q.Done(key)\n"
	earlyReturn = "\tif key == \"\" {\n\t\treturn true\n\t}\n\tdefer q.Done(key)\n"
)

// worker returns the source of package pkg: a worker whose item is
// released, or not, by afterShutdown, the lines after its shutdown check.
// Its Get is on line 6, and an early return in afterShutdown on line 11.
func worker(pkg, afterShutdown string) string {
	return "package " + pkg + `

import "k8s.io/client-go/util/workqueue"

func process(q workqueue.TypedRateLimitingInterface[string], sync func(string) error) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
` + afterShutdown + `	if err := sync(key); err != nil {
		q.AddRateLimited(key)
		return true
	}
	q.Forget(key)
	return true
}
`
}

func writeFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(text), 0o666); err != nil {
		t.Fatal(err)
	}
}

// -sarif writes one rule a kind, and the text report is still printed.
func TestSARIF(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and loads client-go")
	}
	dir := t.TempDir()
	command := filepath.Join(dir, "workqueuedone")
	if out, err := exec.Command("go", "build", "-o", command, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sarif := filepath.Join(dir, "out.sarif")
	cmd := exec.Command(command, "-sarif="+sarif, "./double")
	cmd.Dir = "../../passes/workqueuedone/testdata"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("workqueuedone -sarif over a package with reports: %v, want exit status 3\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "double: q.Done(key) is the second Done") {
		t.Errorf("the text report is not printed beside the SARIF:\n%s", stderr.String())
	}
	doc, err := os.ReadFile(sarif)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID   string
						Help struct{ Text string }
					}
				}
			}
			Results []struct {
				RuleID  string
				Message struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal(doc, &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("not a SARIF 2.1.0 log with one run (%v):\n%s", err, doc)
	}
	var ids []string
	for _, r := range log.Runs[0].Tool.Driver.Rules {
		if r.Help.Text == "" {
			t.Errorf("rule %s has no help text", r.ID)
		}
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, " "); got != "stall forget double panic directive" {
		t.Errorf("rules %q, want one a kind", got)
	}
	kinds := map[string]int{}
	for _, r := range log.Runs[0].Results {
		if !strings.HasPrefix(r.Message.Text, r.RuleID+":") {
			t.Errorf("result with rule %s says %q", r.RuleID, r.Message.Text)
		}
		kinds[r.RuleID]++
	}
	if kinds["double"] != 3 || kinds["panic"] != 1 {
		t.Errorf("results by rule %v, want 3 double and 1 panic (testdata/double)", kinds)
	}
}

// The README names the version -V prints.
func TestVersionIsTheREADMEs(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "This is workqueuedone " + workqueuedone.Version + ","; !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not say %q", want)
	}
}
