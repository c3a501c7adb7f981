// Command cluster starts a control plane (etcd and kube-apiserver) with
// controller-runtime's envtest, writes its kubeconfig, prints "ready" on a
// line of its own, and stops the control plane when it is told to: on
// SIGTERM, SIGINT or SIGHUP, and with -stop-when-stdin-closes also when its
// standard input reaches end of file (the test suite holds the other end, so
// a suite that dies for any reason stops the control plane).
//
// envtest starts etcd and kube-apiserver in process groups of their own, so
// a Ctrl-C in a terminal does not reach them, and they would outlive this
// program if it were killed outright. So envtest is pointed at this very
// program under the names etcd and kube-apiserver (symbolic links in a
// temporary folder): started under such a name, it asks the kernel to kill
// it when its parent dies (PR_SET_PDEATHSIG), then executes the real binary,
// which keeps that setting.
//
// The binaries come from KUBEBUILDER_ASSETS, as with envtest; `cargo xtask`
// builds them (see xtask/src/control_plane.rs).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The variables that tell a wrapped start which binary to run.
var realBinaryEnv = map[string]string{"etcd": "CLUSTER_REAL_ETCD", "kube-apiserver": "CLUSTER_REAL_KUBE_APISERVER"}

// The variables through which envtest finds each binary; they take
// precedence over KUBEBUILDER_ASSETS and over BinaryAssetsDirectory.
var envtestAssetEnv = map[string]string{"etcd": "TEST_ASSET_ETCD", "kube-apiserver": "TEST_ASSET_KUBE_APISERVER"}

func main() {
	if name := filepath.Base(os.Args[0]); name == "etcd" || name == "kube-apiserver" {
		execWithParentDeathSignal(name)
		return
	}
	// A flag set of its own: controller-runtime registers a global -kubeconfig.
	flags := flag.NewFlagSet("cluster", flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "where to write the kubeconfig (required)")
	stdinStops := flags.Bool("stop-when-stdin-closes", false, "stop when standard input reaches end of file")
	_ = flags.Parse(os.Args[1:])
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "cluster: -kubeconfig is required")
		os.Exit(2)
	}
	if err := run(*kubeconfig, *stdinStops); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, stdinStops bool) error {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	wrappers, err := os.MkdirTemp("", "cluster-wrappers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(wrappers)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		real := os.Getenv(envtestAssetEnv[name])
		if real == "" && assets != "" {
			real = filepath.Join(assets, name)
		}
		if real == "" {
			return fmt.Errorf("neither KUBEBUILDER_ASSETS nor %s is set (run through `cargo xtask cluster up`, which builds the binaries)", envtestAssetEnv[name])
		}
		wrapper := filepath.Join(wrappers, name)
		if err := os.Symlink(self, wrapper); err != nil {
			return err
		}
		if err := errors.Join(os.Setenv(realBinaryEnv[name], real), os.Setenv(envtestAssetEnv[name], wrapper)); err != nil {
			return err
		}
	}

	// Stop signals are caught before anything starts, so none is lost.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	env := &envtest.Environment{
		ControlPlaneStartTimeout: 120 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	if _, err := env.Start(); err != nil {
		_ = env.Stop()
		return fmt.Errorf("starting the control plane: %w", err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "cluster: stopping the control plane:", err)
		}
	}()
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	fmt.Println("ready")

	stdinClosed := make(chan struct{})
	if stdinStops {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			close(stdinClosed)
		}()
	}
	select {
	case <-stop:
	case <-stdinClosed:
	}
	return nil
}

// execWithParentDeathSignal replaces this process by the real binary of the
// same name, which the kernel kills when the supervisor dies.
func execWithParentDeathSignal(name string) {
	// The setting belongs to the calling thread, and execve keeps only the
	// thread that calls it: both must happen on the same one.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "cluster: PR_SET_PDEATHSIG:", err)
		os.Exit(1)
	}
	// The parent may have died before the setting took: then nobody would stop us.
	if os.Getppid() == 1 {
		os.Exit(1)
	}
	real := os.Getenv(realBinaryEnv[name])
	args := append([]string{real}, os.Args[1:]...)
	if err := syscall.Exec(real, args, os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "cluster: exec %s: %v\n", real, err)
		os.Exit(1)
	}
}
