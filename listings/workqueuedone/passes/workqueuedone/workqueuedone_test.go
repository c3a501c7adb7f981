package workqueuedone_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

// testdata is a module of its own that requires the real client-go and
// controller-runtime, so the queues are the real types.
func TestShapes(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), workqueuedone.Analyzer, "./loops", "./release", "./limits")
}

func TestSuggestedFix(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), workqueuedone.Analyzer, "./fix")
}

func TestPanicFlagOff(t *testing.T) {
	if err := workqueuedone.Analyzer.Flags.Set("panic", "false"); err != nil {
		t.Fatal(err)
	}
	defer workqueuedone.Analyzer.Flags.Set("panic", "true")
	analysistest.Run(t, analysistest.TestData(), workqueuedone.Analyzer, "./nopanic")
}
