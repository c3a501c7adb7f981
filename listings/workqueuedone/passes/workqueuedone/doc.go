// Package workqueuedone defines an Analyzer that reports work-queue items
// that are handed out and never finished.
//
// # Analyzer workqueuedone
//
// workqueuedone: report a path on which a work-queue item is never Done
//
// A client-go work queue (k8s.io/client-go/util/workqueue, typed or not,
// and controller-runtime's priorityqueue) hands an item out with Get or
// GetWithPriority and marks it as being processed. Until Done is called on
// that item, the queue never hands it out again: every later Add of the key
// is absorbed, and the object is silently never reconciled. Forget does not
// help; it only resets the rate limiter.
//
// # What hands an item out (handout.go)
//
// A call of Get or GetWithPriority, declared by one of those two packages,
// on a type that also has their Done; and a call of a wrapper: a function
// or method that returns, on some path, an item it got from a queue (or
// from another wrapper) without releasing it. A wrapper is known to its
// callers, in its package and in the packages that import it, as an
// analysis fact, together with which of its results is the shutdown flag.
// The item may be assigned (:=, =, var) to a variable or to a field; an
// item thrown away is a report at once.
//
// # Paths (paths.go, shutdown.go)
//
// For each hand-out, the analyzer follows every path of the function's
// control-flow graph from the call, past the shutdown check, to an exit: a
// return, the function's end, or the loop around the call coming back to
// it. The shutdown check may be written with the flag alone or negated,
// inside && or ||, compared with true or false, as a switch case, or
// through a helper that returns the flag; on its shutdown side nothing was
// handed out.
//
// # What releases an item (release.go)
//
//   - q.Done(item), or defer q.Done(item), on the same queue expression (or
//     a local variable assigned from it), with the item or a variable
//     assigned from it (item.(string), a conversion);
//   - a function literal called at once, or started with go, that releases
//     it on every path (older sample-controller's func(obj any) error
//     {...}(obj));
//   - a function or method that releases its parameter on every path (an
//     analysis fact); for a wrapper's item, a method of the wrapper's type
//     must be called on the same receiver expression;
//   - returning it to the caller, whose job it then is (the function is
//     then a wrapper, above).
//
// # Hand-offs (handoff.go)
//
// An item sent on a channel, stored in a map, slice or field, passed to a
// function that stores it, or captured by a function literal that releases
// it and is passed or stored rather than called, leaves the function in
// someone else's hands. Where the other end is a channel whose receivers
// are all in the analyzed package, each receiver is followed as a hand-out
// of its own, and one that does not release what it received is reported
// there. Where the other end cannot be seen (a map, a slice, a field, a
// closure, a channel received elsewhere), nothing is reported, as lostcancel
// does for a cancel function that escapes, unless -strict is set.
//
// # Reports (report.go)
//
// Each report starts with its kind:
//
//   - stall: a path leaves without releasing the item;
//   - forget: the same, on a path that calls Forget on the item, which
//     resets the backoff but is not Done;
//   - double: a path calls Done twice on the item (a defer and a call, or
//     two calls); if the key was added again while it was being
//     processed, each Done puts it back in the queue, and two workers are
//     handed it at once;
//   - panic: Done is called on every path but not deferred, with a call
//     that can panic in between, so a panic there leaks the item
//     (-panic=false turns this kind off).
//
// A message quotes the Done as the function writes it and names the path
// that leaks by the last branch it took. Reports in _test.go files are made
// only with -tests. A report is accepted, with a reason, by the comment
// //workqueuedone:accept <reason> on its line, on the line above it, or in
// the doc comment of the function it is in (directive.go); a directive with
// no reason, or one that accepts nothing, is itself reported.
//
// Where adding defer q.Done(item) after the shutdown check fixes every
// path, and no hand-off, loop or alias makes that line wrong, the report
// carries it as a suggested fix (fix.go).
//
// # What it cannot see
//
// A queue reached through an interface of your own that declares Get and
// Done itself (only methods declared by client-go's workqueue and
// controller-runtime's priorityqueue count, or wrappers of them); an item
// released through reflection; the readers of a map, slice or field the
// item is stored in, so a store is trusted even where nobody calls Done; a
// helper that stores the item for its own reasons, which is taken for a
// hand-off; a wrapper or helper in a package that is not analyzed before
// its callers; a Done on a queue reached through a different field path
// than the one the item came from; which iterations of a loop run (a Done
// that runs on one iteration only is taken to be skippable, and the path
// that skips it is reported). Each is a case in testdata/limits.
package workqueuedone

import (
	"go/token"
	"reflect"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/ctrlflow"
	"golang.org/x/tools/go/analysis/passes/inspect"
)

const doc = `report a path on which a work-queue item is never Done

A client-go work queue hands an item out with Get (or GetWithPriority on
controller-runtime's priority queue) and never hands that key out again
until Done is called on it. workqueuedone follows every path from the
hand-out (or from a wrapper that returns the item), past the shutdown
check, to the function's end, and reports a path that does not release the
item: "stall:" where nothing releases it, "forget:" where the path calls
Forget, which is not Done, "double:" where Done is called twice, and
"panic:" where Done is called but not deferred, so that a panic in between
leaks the item. An item sent on a channel is followed to its receivers.
Accept a report with //workqueuedone:accept <reason>.`

// Analyzer is the workqueuedone analyzer.
var Analyzer = newAnalyzer()

func newAnalyzer() *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name:      "workqueuedone",
		Doc:       doc,
		URL:       "https://github.com/forget-is-not-delete/book/tree/main/listings/workqueuedone",
		Requires:  []*analysis.Analyzer{inspect.Analyzer, ctrlflow.Analyzer},
		Run:       run,
		FactTypes: []analysis.Fact{new(releases), new(handsOut), new(storesParam), new(shutdownFlag)},
		// The result lets a driver count hand-outs (the book's corpus does).
		ResultType: reflect.TypeFor[[]Handout](),
	}
	// The settings, as flags of the analyzer: go vet, the command, and
	// golangci-lint's plugin settings all reach them.
	a.Flags.BoolVar(&reportPanic, "panic", true,
		"report a Done that is called on every path but not deferred")
	a.Flags.BoolVar(&reportTests, "tests", false,
		"make reports in _test.go files too (they are analyzed either way; the command's -test=false, a different flag, does not load them at all)")
	a.Flags.BoolVar(&strict, "strict", false,
		"report an item handed off to an end the analyzer cannot see (a map, a field, a closure, a channel received elsewhere)")
	return a
}

// A Handout is one call that hands out an item, as the analyzer's result
// reports it to a driver that counts.
type Handout struct {
	Func    string    // the function the call is in ("the function literal")
	FuncPos token.Pos // where that function (or literal) starts
	Get     token.Pos // the call
	Reports int       // how many reports it got, after -tests and directives
}

// The settings (newAnalyzer registers them as flags).
var (
	reportPanic bool
	reportTests bool
	strict      bool
)
