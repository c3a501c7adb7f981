//go:build tools

// Package tools pins kube-apiserver for `cargo xtask control-plane`; the xtask
// builds k8s.io/kubernetes/cmd/kube-apiserver from this module.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
