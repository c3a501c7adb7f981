# The CI step: go vet's own analyzers and workqueuedone in one run, which
# fails when either reports. The vet tool is built in the analyzer's own
# module, whose golang.org/x/tools is the one your Go's vet vendors, so that
# vet's analyzers run as the same code, at the same cost, as in go vet.
vettool="$(mktemp -d)/vet-workqueuedone"
go -C third_party/workqueuedone build -o "$vettool" ./cmd/vet-workqueuedone
go vet -vettool="$vettool" ./...
