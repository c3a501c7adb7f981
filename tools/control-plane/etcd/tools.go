//go:build tools

// Package tools pins etcd for `cargo xtask control-plane`, which builds
// go.etcd.io/etcd/server/v3 (its root package is etcd's main) from this module.
package tools

import _ "go.etcd.io/etcd/server/v3"
