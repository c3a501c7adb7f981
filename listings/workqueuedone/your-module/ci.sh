# The CI step: go vet's own analyzers and workqueuedone in one run, which
# fails when either reports. go tool -n builds the pinned tool (cached) and
# prints its path, which is what -vettool needs.
go vet -vettool="$(go tool -n vet-workqueuedone)" ./...
