#!/usr/bin/env bash
# Once, in your module's root: pins the analyzer's command with Go's tool
# directive in tools.mod, a go.mod of its own, so that its dependencies
# never enter your go.mod and go.sum.
#
#   bash third_party/workqueuedone/your-module/setup.sh
#
# Then, by hand or in CI (the second line prints the version):
#
#   go tool -modfile=tools.mod workqueuedone ./...
#   go tool -modfile=tools.mod workqueuedone -V
#
# Commit tools.mod and tools.sum. Run it again to add the analyzer to a
# tools.mod you already have.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
if [ ! -f tools.mod ]; then
  printf 'module %s\n\ngo 1.26.0\n' "$(go list -m)" > tools.mod
fi
analyzer_module=forget-is-not-delete/workqueuedone
go mod edit -replace="$analyzer_module=./$analyzer_rel" tools.mod
GOWORK=off go get -tool -modfile=tools.mod \
  "$analyzer_module/cmd/workqueuedone"
