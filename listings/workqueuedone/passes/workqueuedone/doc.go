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
// # The question every report answers (value.go, walk.go)
//
// Is this value the item that Get handed out? The analyzer answers it on
// the package's SSA form, where every value has one definition, and along
// one path at a time. The same value under another name is the item: a
// type switch's variable, a conversion to or from an interface, a field
// of a struct built from it and read back (here, in a helper, or in a
// wrapper's caller), a variable captured by a function literal, an
// element taken from a local slice or map that holds it. A different
// value under the same name is not: a variable given another value before
// Done no longer holds the item on the paths where it was given it. And a
// Done behind a condition (a flag that a deferred literal reads) releases
// the item on exactly the paths where the condition holds: the walk keeps
// the flag's value along each path, and runs deferred literals at the
// return with it.
//
// # What hands an item out (handout.go)
//
// A call of Get or GetWithPriority, declared by one of those two packages,
// on a type that also has their Done; and a call of a wrapper: a function
// or method that returns, on some path, an item it got from a queue (or
// from another wrapper) without releasing it. A wrapper is known to its
// callers, in its package and in the packages that import it, as an
// analysis fact, together with which of its results is the shutdown flag.
// An item thrown away is a report at once.
//
// # Paths (walk.go, calls.go)
//
// For each hand-out, the analyzer follows every path from the call, past
// the shutdown check, to an exit: a return, or the loop around the call
// coming back to it. The shutdown check may be written with the flag
// alone or negated, inside && or ||, compared with true or false, as a
// switch case, or through a helper that returns the flag; on its shutdown
// side nothing was handed out. A function literal that the function
// calls, defers or starts with go is walked in place, with the variables
// it captured, so a local closure that finishes the item is followed like
// any other code. Items collected in a local batch stay held round the
// loop that collects them, and a range over the batch comes to each one
// once.
//
// # What releases an item (calls.go, facts.go)
//
//   - a Done of the queue that handed it out (the same field read again, or
//     a local variable holding it), on the item, deferred or not;
//   - a function or method that releases a parameter, or a part of one (a
//     struct's field, a slice's elements), on every path: an analysis fact;
//     for a wrapper's item, a method of the wrapper's type must be called
//     on the same receiver;
//   - a literal, as above, that does one of those;
//   - returning it to the caller, whose job it then is (the function is
//     then a wrapper, above).
//
// # Hand-offs (handoff.go)
//
// An item sent on a channel, stored where another function can read it (a
// field, a global, a map or slice the function did not make), passed to a
// function that stores it, or captured by a literal that releases it and
// is passed or stored rather than called, leaves the function in someone
// else's hands. Where the other end is a channel whose receivers are all
// in the analyzed package, each receiver is followed as a hand-out of its
// own, and one that does not release what it received is reported there.
// Where the other end cannot be seen, nothing is reported, as lostcancel
// does for a cancel function that escapes, unless -strict is set. A local
// struct, slice, map or literal is not a hand-off: its other end is in
// sight, and is followed.
//
// # Reports (report.go)
//
// Each report starts with its kind:
//
//   - stall: a path leaves without releasing the item;
//   - forget: the same, on a path that calls Forget on the item, which
//     resets the backoff but is not Done;
//   - double: a path calls Done twice on the item (a defer and a call, two
//     calls, or one literal called twice); if the key was added again while
//     it was being processed, each Done puts it back in the queue, and two
//     workers are handed it at once;
//   - panic: Done is called on every path but not deferred, with a call
//     that can panic in between (any call but a builtin that cannot, a
//     queue's own method, or a mutex's Lock and Unlock; or a slice
//     converted to an array), so a panic there leaks the item; one report
//     for an item, at the first such Done (-panic=false turns this kind
//     off).
//
// A message quotes the Done as the function writes it and names the path
// that leaks by the last branch it took. Reports in _test.go files are made
// only with -tests. A report is accepted, with a reason, by the comment
// //workqueuedone:accept <reason> on its line, on the line above it, or in
// the doc comment of the function it is in (directive.go); a directive with
// no reason, one that accepts nothing, and a comment meant as one but
// written wrong (a space after the slashes, a misspelling) are reported.
//
// Where adding defer q.Done(item) after the shutdown check makes every
// path release the item exactly once, the report carries it as a
// suggested fix (fix.go): only where no path releases, hands off or
// returns the item, the function writes no Done anywhere (not in a call, a
// method value, an interface or a string), calls no function that
// releases a parameter on any path, and never assigns the item's variable
// again.
//
// # What it cannot see
//
// A queue reached through an interface of your own that declares Get and
// Done itself (only methods declared by client-go's workqueue and
// controller-runtime's priorityqueue count, or wrappers of them); an item
// released through reflection, or through an interface of your own; the
// readers of a field, global or non-local map the item is stored in, so
// such a store is trusted even where nobody calls Done; a helper that
// stores the item for its own reasons, which is taken for a hand-off; a
// Done on the key by value (Done("a")) rather than on the item; a wrapper
// or helper in a package that is not analyzed before its callers; a Done
// on a queue reached through a different field path than the one the item
// came from; which iterations of a loop other than a range over a batch
// run (a Done on one iteration only is taken to be skippable); a literal
// walked in place more than four deep; and a function with more than
// 20000 block visits on one item's paths, which is given up on without a
// report. Each is a case in testdata/limits.
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
	GaveUp  bool      // its paths were too many to follow: no report was made
}

// The settings (newAnalyzer registers them as flags).
var (
	reportPanic bool
	reportTests bool
	strict      bool
)
