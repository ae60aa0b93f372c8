// Copyright 2026 The operator101 Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// Command devenv runs a local API server (the locally built etcd and kube-apiserver) with operator101's CRDs,
// writes an administrator kubeconfig, and runs until it gets SIGTERM or SIGINT. hack/dev-apiserver.sh starts it.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "devenv: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	assets := flag.String("assets", "bin/k8s", "directory holding etcd and kube-apiserver")
	crds := flag.String("crds", "config/crd/bases", "directory of CRDs to install")
	kubeconfig := flag.String("write-kubeconfig", "bin/dev-apiserver/kubeconfig", "where to write the admin kubeconfig")
	flag.Parse()

	env := &envtest.Environment{
		BinaryAssetsDirectory: *assets,
		CRDDirectoryPaths:     []string{*crds},
		ErrorIfCRDPathMissing: true,
	}
	// Bind to loopback only; the API server's other defaults stay as envtest sets them.
	env.ControlPlane.GetAPIServer().Configure().Set("bind-address", "127.0.0.1")
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("starting etcd and kube-apiserver: %w", err)
	}
	defer func() { _ = env.Stop() }()

	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		return fmt.Errorf("creating the admin user: %w", err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("rendering kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(*kubeconfig), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(*kubeconfig, kc, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	fmt.Printf("API server %s ready; kubeconfig %s\n", cfg.Host, *kubeconfig)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	fmt.Println("stopping the API server")
	return nil
}
