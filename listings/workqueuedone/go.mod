module forget-is-not-delete/workqueuedone

go 1.26.0

// golang.org/x/tools is exactly the version the installed Go vendors for
// cmd/vet (src/cmd/vendor/modules.txt), so that cmd/vet-workqueuedone runs
// go vet's analyzers as the same code, and writes the same vet output, as
// go vet itself: vetsuite.TestSameXToolsAsGoVet holds the two together.
require (
	github.com/golangci/plugin-module-register v0.1.2
	golang.org/x/tools v0.39.1-0.20260527181557-0f52e3809b35
)

require (
	golang.org/x/mod v0.31.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
