# Sourced by the scripts beside it before they do anything. Each one runs
# in your module's root, with the analyzer unpacked into
# third_party/workqueuedone (mkdir -p third_party && tar -xzf
# workqueuedone.tar.gz -C third_party); each check says what to do.
analyzer="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fail() { echo "workqueuedone: $*" >&2; exit 2; }

mod="$(go env GOMOD)"
if [ -z "$mod" ] || [ "$mod" = /dev/null ]; then
  fail "no go.mod in $PWD: run this in your module's root"
fi
root="$(dirname "$mod")"
case "$analyzer" in
  "$root"/*) ;;
  *) fail "the analyzer is in $analyzer, outside your module ($root): unpack it with mkdir -p third_party && tar -xzf workqueuedone.tar.gz -C third_party" ;;
esac
if [ "$(cd "$analyzer" && sed -n 's/^module //p' go.mod 2>/dev/null)" != "forget-is-not-delete/workqueuedone" ]; then
  fail "$analyzer/go.mod is not the analyzer's: unpack workqueuedone.tar.gz into third_party/ so that it makes third_party/workqueuedone"
fi

# The analyzer's go.mod says go 1.26.0; it is tested on 1.26.8 and 1.27.3.
goversion="$(go env GOVERSION)"
minor="$(echo "$goversion" | sed -n 's/^go1\.\([0-9][0-9]*\).*/\1/p')"
if [ -z "$minor" ] || [ "$minor" -lt 26 ]; then
  fail "$goversion is older than the analyzer supports: use Go 1.26.8 or 1.27.3 (GOTOOLCHAIN=go1.27.3 fetches it from the module proxy)"
fi

if ! (cd "$root" && go list -m k8s.io/client-go >/dev/null 2>&1); then
  fail "$root/go.mod does not require k8s.io/client-go, whose work queue the analyzer checks: there is nothing here for it to find"
fi
analyzer_rel="${analyzer#"$root"/}"
