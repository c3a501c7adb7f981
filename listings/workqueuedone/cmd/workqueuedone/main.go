// Command workqueuedone reports work-queue items that are handed out and
// never Done. Run it on its own:
//
//	workqueuedone ./...
//
// or through go vet, beside vet's own analyzers:
//
//	go vet -vettool=$(which workqueuedone) ./...
//
// It exits with a non-zero status when it reports anything.
package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

func main() { singlechecker.Main(workqueuedone.Analyzer) }
