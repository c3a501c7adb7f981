// Command vet-workqueuedone is go vet's own analyzers and workqueuedone in
// one vet tool, so that a single go vet step loses nothing:
//
//	go build -o vet-workqueuedone ./cmd/vet-workqueuedone
//	go vet -vettool=$PWD/vet-workqueuedone ./...
//
// go vet -vettool=TOOL runs TOOL's analyzers in place of its own, so a
// tool built from workqueuedone alone (cmd/workqueuedone) would leave a
// printf mistake or a lost cancel unreported for that run. This one runs
// the analyzers go vet runs by default (package vetsuite, checked against
// cmd/vet of the installed Go) and workqueuedone beside them. go vet
// caches each package's result by the tool's hash, as it does its own.
//
// Build it in this module, as above: its golang.org/x/tools is the one the
// installed Go vendors for cmd/vet, so vet's analyzers are the same code as
// go vet's and write the same output for the go command to cache. Built in
// a module that needs a later x/tools, it writes each package's types into
// that output as well, and every go vet run, even a fully cached one, takes
// longer to hash it.
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
