// Command vet-workqueuedone is go vet's own analyzers and workqueuedone in
// one vet tool, so that a single go vet step loses nothing. The CI step
// builds it for the Go on PATH and runs go vet with it, in your module's
// root:
//
//	bash third_party/workqueuedone/your-module/ci.sh
//
// go vet -vettool=TOOL runs TOOL's analyzers in place of its own, so a
// tool built from workqueuedone alone (cmd/workqueuedone) would leave a
// printf mistake or a lost cancel unreported for that run. This one runs
// the analyzers go vet runs by default (package vetsuite, checked against
// cmd/vet of the installed Go) and workqueuedone beside them. go vet caches each package's result by
// the tool's hash, as it does its own.
//
// Build it with cmd/build-vet-workqueuedone, not go build: it builds the
// tool on the golang.org/x/tools that the running Go vendors for cmd/vet,
// so that vet's analyzers are the same code as go vet's and write the same
// output for the go command to cache. Built on another x/tools, vet's
// analyzers would differ from go vet's, and a later one writes each
// package's types into that output as well, which every go vet run, even
// a fully cached one, takes longer to hash.
//
// Each analyzer's flags are prefixed with its name, as under any
// multi-analyzer vet tool: -workqueuedone.panic=false,
// -workqueuedone.tests, -workqueuedone.strict; -workqueuedone=false turns
// it off and leaves go vet's suite as it is. go vet sets the status: non-zero
// when anything is reported.
//
// It runs only under go vet. On its own, use cmd/workqueuedone.
package main

import (
	"golang.org/x/tools/go/analysis/unitchecker"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
	"forget-is-not-delete/workqueuedone/vetsuite"
)

func main() {
	unitchecker.Main(append(vetsuite.Analyzers[:len(vetsuite.Analyzers):len(vetsuite.Analyzers)], workqueuedone.Analyzer)...)
}
