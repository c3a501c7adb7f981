// Command cluster starts a control plane (etcd and kube-apiserver) with
// controller-runtime's envtest, writes its kubeconfig, prints "ready" on a
// line of its own, and stops the control plane when it is told to: on
// SIGTERM, SIGINT or SIGHUP, and with -stop-when-stdin-closes also when its
// standard input reaches end of file (the test suite holds the other end, so
// a suite that dies for any reason stops the control plane).
//
// On SIGUSR1 it kills kube-apiserver (SIGKILL: a crash, not a graceful
// stop, which would wait for open watches) and starts it again on the same
// etcd, port and certificates, so that clients reconnect with the
// kubeconfig they have (listing 9-8 uses this to cut every watch). Once the
// new server is healthy, it prints "restarted" and writes how many restarts
// there have been to the kubeconfig's path with ".restarts" appended, where
// the listing that asked waits for it.
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
	"strconv"
	"strings"
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

	restart := make(chan os.Signal, 1)
	signal.Notify(restart, syscall.SIGUSR1)

	// A certificate folder of our own: envtest would make a new one, with a
	// new serving CA, on every start of kube-apiserver, and the clients'
	// kubeconfig would no longer trust the restarted server.
	certs, err := os.MkdirTemp("", "cluster-apiserver-certs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(certs)
	env := &envtest.Environment{
		ControlPlaneStartTimeout: 120 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	env.ControlPlane.GetAPIServer().CertDir = certs
	if _, err := env.Start(); err != nil {
		_ = env.Stop()
		return fmt.Errorf("starting the control plane: %w", err)
	}
	defer os.Remove(kubeconfig + ".restarts")
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
	restarts := 0
	for {
		select {
		case <-stop:
			return nil
		case <-stdinClosed:
			return nil
		case <-restart:
			apiServer := env.ControlPlane.GetAPIServer()
			if err := killChild("kube-apiserver"); err != nil {
				return err
			}
			if err := apiServer.Stop(); err != nil {
				return fmt.Errorf("stopping kube-apiserver for a restart: %w", err)
			}
			if err := apiServer.Start(); err != nil {
				return fmt.Errorf("starting kube-apiserver again: %w", err)
			}
			restarts++
			fmt.Println("restarted")
			if err := os.WriteFile(kubeconfig+".restarts", []byte(strconv.Itoa(restarts)), 0o644); err != nil {
				return err
			}
		}
	}
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

// killChild kills this process's child of the given command name.
func killChild(name string) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		open, close := strings.IndexByte(string(stat), '('), strings.LastIndexByte(string(stat), ')')
		if open < 0 || close < open {
			continue
		}
		fields := strings.Fields(string(stat)[close+1:])
		if string(stat)[open+1:close] == name && len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			return syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return fmt.Errorf("no %s among this process's children", name)
}
