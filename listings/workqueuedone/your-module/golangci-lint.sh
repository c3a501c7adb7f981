#!/usr/bin/env bash
# Builds golangci-lint with workqueuedone compiled in, by golangci-lint's
# documented manual route (a blank import beside cmd/golangci-lint, then
# go build), from the Go module proxy alone: no git. In your module's root:
#
#   bash third_party/workqueuedone/your-module/golangci-lint.sh
#   cp third_party/workqueuedone/your-module/.golangci.yml .
#   third_party/workqueuedone/bin/golangci-lint run ./...
#
# (Merge .golangci.yml into yours if you have one.) The binary goes to
# third_party/workqueuedone/bin/, which the archive's .gitignore ignores,
# and is built again only when the Go, the version below or the
# analyzer's source changed.
set -euo pipefail
version=v2.15.0 # as .custom-gcl.yml says, and as the book tests
source "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
bin="$analyzer/bin/golangci-lint"
inputs="$(go version; echo "golangci-lint $version"
  cd "$analyzer" && find go.mod go.sum cmd passes plugin vetsuite \
    -path '*/testdata' -prune -o -type f -print |
    LC_ALL=C sort | xargs sha256sum)"
if [ -x "$bin" ] && [ "$(cat "$bin.inputs" 2>/dev/null)" = "$inputs" ]
then
  echo "golangci-lint.sh: $bin is up to date" >&2
  exit 0
fi
export GOWORK=off GOFLAGS=
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
module="github.com/golangci/golangci-lint/v2"
src="$(cd "$work" && go mod download -json "$module@$version" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$src" ]; then
  echo "golangci-lint.sh: no $module@$version from the proxy" >&2
  exit 1
fi
cp -R "$src/." "$work/golangci-lint"
chmod -R u+w "$work/golangci-lint"
cd "$work/golangci-lint"
plugin=forget-is-not-delete/workqueuedone
printf 'package main\n\nimport _ "%s/plugin"\n' "$plugin" \
  > cmd/golangci-lint/workqueuedone.go
go mod edit -replace="$plugin=$analyzer" \
  -require="$plugin@v0.0.0-00010101000000-000000000000"
go mod tidy
mkdir -p "$analyzer/bin"
go build -trimpath -o "$bin.partial" -ldflags \
  "-X main.version=${version#v}+workqueuedone -X main.date=unknown" \
  ./cmd/golangci-lint
mv "$bin.partial" "$bin"
echo "$inputs" > "$bin.inputs"
echo "golangci-lint.sh: built $bin" >&2
