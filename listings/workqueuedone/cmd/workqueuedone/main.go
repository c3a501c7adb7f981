// Command workqueuedone reports work-queue items that are handed out and
// never Done. Run it on its own, in your module's root, once
// your-module/setup.sh has pinned it in tools.mod:
//
//	go tool -modfile=tools.mod workqueuedone ./...
//
// It loads and type-checks every package and dependency from source on
// each run and caches nothing. In CI, prefer go vet with the vet tool
// cmd/vet-workqueuedone, which runs go vet's own analyzers and this one in
// one step and lets go vet cache each package's result:
// your-module/ci.sh builds it for the Go that runs it and runs go vet.
// go vet -vettool=TOOL runs TOOL's analyzers in place of its own, so
// naming this command there would drop printf, lostcancel and the rest
// for that run.
//
// -V prints the analyzer's version (-V=full is go vet's handshake).
//
// On its own it exits 3 when it reports anything, 1 on errors (a package
// that does not load, say) and 0 otherwise; under go vet, go vet sets the
// status.
//
// With -fix it applies the suggested fixes (defer q.Done(item) after the
// shutdown check, where that one line releases the item on every path),
// then checks the packages again, prints the reports that remain (those
// no fix mends: an early return, a stall in a loop) and exits 3 if there
// are any, so that workqueuedone -fix ./... in CI fails while a stall is
// left. With -fix -diff nothing is written, so every report remains. With
// -json the status is 0, as with every go/analysis driver: read the
// JSON. With -sarif=FILE it writes the reports to FILE as SARIF 2.1.0, one
// rule a kind of report (stall, forget, double, panic, directive), still
// prints them as text, and exits 3 when there are any. go vet -fix is left as go vet makes it: it applies the fixes and
// neither prints nor fails on what remains, so run go vet without -fix
// after it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis/singlechecker"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

// childEnv, set to 1 in the environment of the runs fixThenCheck starts,
// makes them plain singlecheckers: without it, each would see -fix and
// start runs of its own.
const childEnv = "WORKQUEUEDONE_FIX_CHILD"

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "-V" || os.Args[1] == "--V") {
		fmt.Printf("workqueuedone %s (forget-is-not-delete/workqueuedone, built with %s)\n", workqueuedone.Version, runtime.Version())
		return
	}
	if os.Getenv(childEnv) != "1" {
		if file, rest, ok := sarifArgs(os.Args[1:]); ok {
			os.Exit(writeSARIF(file, rest))
		}
		if checkArgs, ok := fixArgs(os.Args[1:]); ok {
			os.Exit(fixThenCheck(os.Args[1:], checkArgs))
		}
	}
	singlechecker.Main(workqueuedone.Analyzer)
}

// fixThenCheck runs this command as a child twice: with args, which
// applies the fixes, and then with checkArgs, which are args without
// -fix, and returns the second run's status. Both runs print to this
// command's stdout and stderr.
//
// singlechecker with -fix prints nothing and exits 0 whatever is left
// unfixed; a second, plain run is what prints the rest and sets the
// status.
func fixThenCheck(args, checkArgs []string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "workqueuedone: %v\n", err)
		return 1
	}
	if status := runChild(self, args); status != 0 {
		return status // the fixes failed: a package did not load, fixes conflicted
	}
	return runChild(self, checkArgs)
}

// runChildOutput runs the command at path with args, its stdout captured,
// and returns that and its exit status.
func runChildOutput(path string, args []string) ([]byte, int) {
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.Output()
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		if status := exit.ExitCode(); status > 0 {
			return out, status
		}
		return out, 1
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "workqueuedone: %v\n", err)
		return out, 1
	}
	return out, 0
}

// runChild runs the command at path with args and returns its exit status.
func runChild(path string, args []string) int {
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		if status := exit.ExitCode(); status > 0 {
			return status
		}
		return 1 // killed by a signal
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "workqueuedone: %v\n", err)
		return 1
	}
	return 0
}

// fixArgs reports whether args ask to apply fixes in the command's own
// driver (not under go vet), and returns args without -fix for the run
// that checks what is left.
//
// It reads the flags as the flag package will: up to "--" or the first
// argument that is not a flag, skipping the value of a flag that takes
// one, the last -fix winning. It leaves the command alone (ok is false)
// when singlechecker must see the arguments untouched: without -fix or
// with -fix=false; for go vet's handshake (-V=full, -flags) and for the
// *.cfg file go vet passes (go vet -fix); for -help; with no packages,
// or with a -fix value the flag package rejects, so that singlechecker
// prints the usage or the error as it always has.
func fixArgs(args []string) (checkArgs []string, ok bool) {
	takesValue := map[string]bool{
		// singlechecker's own flags that are not boolean.
		"c": true, "debug": true, "cpuprofile": true, "memprofile": true, "trace": true, "tags": true,
	}
	workqueuedone.Analyzer.Flags.VisitAll(func(f *flag.Flag) {
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
			takesValue[f.Name] = true
		}
	})

	fix := false
	fixFlags := map[int]bool{} // indices in args of -fix flags
	var packages []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			packages = args[i+1:]
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			packages = args[i:]
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
		switch {
		case name == "fix":
			fixFlags[i] = true
			fix = true
			if hasValue {
				v, err := strconv.ParseBool(value)
				if err != nil {
					return nil, false
				}
				fix = v
			}
		case name == "V" || name == "flags" || name == "h" || name == "help":
			return nil, false
		case takesValue[name] && !hasValue:
			i++ // the next argument is the value
		}
	}
	if !fix || len(packages) == 0 || len(packages) == 1 && strings.HasSuffix(packages[0], ".cfg") {
		return nil, false
	}

	for i, arg := range args {
		if !fixFlags[i] {
			checkArgs = append(checkArgs, arg)
		}
	}
	return checkArgs, true
}
