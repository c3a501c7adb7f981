#!/usr/bin/env bash
# The CI step: go vet's own analyzers and workqueuedone in one go vet run,
# which fails when either reports. In your module's root:
#
#   bash third_party/workqueuedone/your-module/ci.sh            # ./...
#   bash third_party/workqueuedone/your-module/ci.sh ./pkg/...  # or these
#
# The vet tool is built for the Go on PATH (cmd/build-vet-workqueuedone
# matches go vet's own golang.org/x/tools), outside your module, and
# removed when the step ends.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
GOWORK=off GOFLAGS= go -C "$analyzer" \
  run ./cmd/build-vet-workqueuedone -o "$tmp/vet-workqueuedone"
go vet -vettool="$tmp/vet-workqueuedone" "${@:-./...}"
