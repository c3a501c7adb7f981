# Once, in your module, with the book's workqueuedone.tar.gz unpacked into
# third_party/workqueuedone: pin the command with Go's tool directive.
go mod edit -replace=forget-is-not-delete/workqueuedone=./third_party/workqueuedone
go get -tool forget-is-not-delete/workqueuedone/cmd/workqueuedone
