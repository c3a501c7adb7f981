//go:build tools

// Package tools pins promtool (Prometheus 3.16.0, module v0.316.0) for
// `cargo xtask control-plane`, which builds its cmd/promtool with the
// remove_all_sd tag (no cloud service discovery: a third of the build).
package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"
