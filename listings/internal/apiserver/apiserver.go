// Package apiserver holds what every Go twin of the API-server chapter needs
// and no reader needs to see: a client for the control plane named by
// KUBECONFIG, a namespace of the twin's own, and bounded waits.
//
// These twins run against a real kube-apiserver, so they are the only ones
// that wait in real time. Every wait is bounded and ends on observed state;
// one that runs out fails with the listing's name and what it waited for.
// They print nothing that varies between runs: no resource versions, UIDs,
// timestamps, ports or namespace names.
package apiserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Bound is how long any one wait may take. Generous: the suite runs these
// twins on a busy two-core machine.
const Bound = 60 * time.Second

// Listing is the name failures carry, e.g. "listing-09-01 (Go twin)".
var Listing = "a Go twin"

// Fail prints a failure naming the listing and exits.
func Fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s: %s\n", Listing, fmt.Sprintf(format, args...))
	os.Exit(1)
}

// Config reads the kubeconfig KUBECONFIG names (`cargo xtask cluster up`
// writes one; the suite sets it).
func Config() *rest.Config {
	path := os.Getenv("KUBECONFIG")
	if path == "" {
		Fail("KUBECONFIG is not set: start a control plane with `cargo xtask cluster up` and use the kubeconfig it prints")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		Fail("reading KUBECONFIG=%s: %v", path, err)
	}
	// client-go's default client-side limit (5 requests a second, bursts of
	// 10) would make the listings' forty updates take eight seconds. kube-rs
	// has no such limit; the twins lift it to match.
	cfg.QPS, cfg.Burst = 1000, 1000
	return cfg
}

// Clientset is a typed client-go client for cfg.
func Clientset(cfg *rest.Config) kubernetes.Interface {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		Fail("client: %v", err)
	}
	return cs
}

// Namespace creates a namespace with a random name and returns the name.
// The name varies, so it is never printed. envtest runs no namespace
// controller, so a deleted namespace would stay Terminating: a fresh one per
// run keeps runs apart instead.
func Namespace(ctx context.Context, cs kubernetes.Interface, prefix string) string {
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name := prefix + "-" + hex.EncodeToString(suffix)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		Fail("creating namespace %s: %v", name, err)
	}
	return name
}

// ConfigMap creates a ConfigMap with one data entry.
func ConfigMap(ctx context.Context, cs kubernetes.Interface, ns, name, key, value string) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{key: value}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		Fail("creating ConfigMap %s: %v", name, err)
	}
}

// LabeledConfigMap creates a ConfigMap with one label and no data.
func LabeledConfigMap(ctx context.Context, cs kubernetes.Interface, ns, name, label, value string) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{label: value}}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		Fail("creating ConfigMap %s: %v", name, err)
	}
}

// SetData updates one data entry of a ConfigMap.
func SetData(ctx context.Context, cs kubernetes.Interface, ns, name, key, value string) {
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		Fail("reading ConfigMap %s: %v", name, err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[key] = value
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		Fail("updating ConfigMap %s: %v", name, err)
	}
}

// Receive waits at most Bound for a value on ch, and fails naming what it
// waited for.
func Receive[T any](ch <-chan T, what string) T {
	select {
	case v := <-ch:
		return v
	case <-time.After(Bound):
		Fail("waited %s for %s", Bound, what)
		panic("unreachable")
	}
}

// Until waits at most Bound for cond to hold, checking it each time a value
// arrives on changed, and fails naming what it waited for.
func Until(changed <-chan struct{}, cond func() bool, what string) {
	deadline := time.After(Bound)
	for !cond() {
		select {
		case <-changed:
		case <-deadline:
			Fail("waited %s for %s", Bound, what)
		}
	}
}

// FreeAddress asks the kernel for a free port on 127.0.0.1 and gives it
// back, for a manager's metrics server to bind.
func FreeAddress() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		Fail("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// HTTPGet is the body of a GET of url, or "" if the request failed or did
// not answer 200 OK (a server that is not up yet; callers retry).
func HTTPGet(url string) string {
	client := http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return ""
	}
	return string(body)
}

// RestartAPIServer asks the cluster supervisor (CLUSTER_SUPERVISOR_PID) to
// kill kube-apiserver and start it again on the same etcd, and waits (at most
// Bound) until the supervisor reports the new server healthy: the count of
// restarts in the file beside the kubeconfig goes up by one.
func RestartAPIServer() {
	pid, err := strconv.Atoi(os.Getenv("CLUSTER_SUPERVISOR_PID"))
	if err != nil {
		Fail("CLUSTER_SUPERVISOR_PID is not set to the PID of the cluster supervisor (`cargo xtask cluster up` prints it)")
	}
	countFile := os.Getenv("KUBECONFIG") + ".restarts"
	count := func() int {
		b, _ := os.ReadFile(countFile)
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
	before := count()
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		Fail("signalling the cluster supervisor (PID %d): %v", pid, err)
	}
	deadline := time.Now().Add(Bound)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for count() <= before {
		if time.Now().After(deadline) {
			Fail("waited %s for the cluster supervisor to restart kube-apiserver (%s)", Bound, countFile)
		}
		<-tick.C
	}
}
