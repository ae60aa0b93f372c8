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

package release

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blang/semver/v4"

	"github.com/operator101/operator101/test/registrytest"
)

// TestDeveloperCatalogServesTheBundle walks the README's development path in a throwaway clone, for the next
// version after the newest release: `make bundle bundle-build bundle-push catalog-build catalog-push` with
// IMAGE_TAG_BASE naming a registry of the developer's. The catalog image, read back from that registry by opm
// (`opm render` of the image: its /configs), holds the developer's bundle, by the tag bundle-push pushed, as the
// head of stable, replacing the newest release and skipping all; every released bundle is still there as the
// committed catalog has it.
//
//   - podman: a registry that serves TLS with a CA of its own (REGISTRY_CERT_DIR), pushes verified against it.
//   - docker: CONTAINER_TOOL=docker, the docker CLI, with `make docker-build docker-push` first: one image per
//     platform, then the list by `docker manifest`, read back as a list of both platforms. No docker daemon is
//     installed here: the CLI talks to podman's Docker-compatible API (podman system service). The registry
//     serves TLS with a CA of its own too, on an address the test makes for itself (registrytest.OwnAddress:
//     on a link of its own, deleted when the test ends), not loopback: the docker CLI's manifest commands push
//     to a registry on a loopback address over plain HTTP, whatever it serves.
//     The CA is given as a docker user gives it, per registry, but in the test's directories, not
//     /etc/docker/certs.d: podman's service finds it in its HOME's .config/containers/certs.d/HOST:PORT (containers/image looks
//     there first, for root too), the CLI through SSL_CERT_FILE, opm through REGISTRY_CERT_DIR. Without it,
//     the service's push and the CLI's read of the registry fail on the certificate. Then `make docker-push`
//     of the same images to a plain-HTTP registry on 127.0.0.1, whose list the CLI makes only with --insecure.
//     The offline opm image is built too (a name of its own): with docker, no Debian package and no root;
//     sudo, apt-get and dpkg-query are stubs on PATH that fail the test if called.
func TestDeveloperCatalogServesTheBundle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and pushes images with podman, which -short (make test) does not install; make ci runs this test")
	}
	root, dir, clone := cloneWithImageTools(t)
	runIn(t, clone, "make", "--no-print-directory", "opm")
	committed := registrytest.CatalogBundles(t, filepath.Join(root, "catalog", "operator101", "index.yaml"))
	var newest semver.Version
	for name := range committed {
		v, err := semver.Parse(strings.TrimPrefix(name, "operator101.v"))
		if err != nil {
			t.Fatalf("released bundle %s: %v", name, err)
		}
		if v.GT(newest) {
			newest = v
		}
	}
	version := fmt.Sprintf("%d.%d.0", newest.Major, newest.Minor+1)
	path := []string{"bundle", "bundle-build", "bundle-push", "catalog-build", "catalog-push", "VERSION=" + version}

	t.Run("podman", func(t *testing.T) {
		certDir := filepath.Join(dir, "podman", "ca")
		base := registrytest.TLS(t, filepath.Join(dir, "podman"), certDir, "127.0.0.1") + "/dev/operator101"
		removeImages(t, base)
		runIn(t, clone, "make", append([]string{"--no-print-directory", "IMAGE_TAG_BASE=" + base,
			"REGISTRY_CERT_DIR=" + certDir, "OCI_RUNTIME=runc"}, path...)...)
		// opm reads the pushed catalog image from the registry, trusting its CA besides the system's.
		servesBundle(t, clone, base, version, newest, committed, trustingCA(t, certDir))
	})

	t.Run("docker", func(t *testing.T) {
		certDir := filepath.Join(dir, "docker", "ca")
		runIn(t, root, "hack/install-deps.sh", "iproute2")
		registry := registrytest.TLS(t, filepath.Join(dir, "docker"), certDir, registrytest.OwnAddress(t))
		base := registry + "/dev/operator101"
		removeImages(t, base)
		cas := trustingCA(t, certDir)
		// And the registry most docker users start with: plain HTTP on 127.0.0.1.
		plain := registrytest.Plain(t, filepath.Join(dir, "docker-plain"))
		plainBase := plain + "/dev/operator101"
		removeImages(t, plainBase)
		stubs := filepath.Join(dir, "docker", "stubs")
		called := filepath.Join(stubs, "called")
		if err := os.MkdirAll(stubs, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"sudo", "apt-get", "dpkg-query"} {
			stub := fmt.Sprintf("#!/bin/sh\necho \"$0 $*\" >>%s\nexit 1\n", called)
			if err := os.WriteFile(filepath.Join(stubs, c), []byte(stub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		// A docker CLI that waits on an answer that never comes fails the test with what it printed.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// The docker CLI's own files (the lists `docker manifest create` keeps) in the test's directory, not ~/.docker.
		service, caFile := dockerAPI(t, filepath.Join(dir, "docker"), registry, filepath.Join(certDir, "ca.crt"), plain)
		docker := []string{"DOCKER_HOST=" + service, "DOCKER_CONFIG=" + filepath.Join(dir, "docker", "config")}
		dockerMake := func(args ...string) []byte {
			t.Helper()
			cmd := exec.CommandContext(ctx, "make", append([]string{"--no-print-directory", "CONTAINER_TOOL=docker"}, args...)...)
			cmd.Dir = clone
			cmd.Env = append(append(os.Environ(), docker...), append(cas,
				"PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"))...)
			cmd.WaitDelay = 10 * time.Second
			out, err := cmd.CombinedOutput()
			if log, _ := os.ReadFile(called); len(log) > 0 {
				t.Errorf("the docker path ran Debian's package tools or sudo:\n%s", log)
			}
			if err != nil {
				t.Fatalf("make %s with CONTAINER_TOOL=docker: %v\n%s", strings.Join(args, " "), err, tail(out, 40))
			}
			return out
		}
		expectList := func(ref string, tlsFlag ...string) {
			t.Helper()
			raw := runIn(t, clone, "skopeo", append(append([]string{"inspect", "--raw"}, tlsFlag...), "docker://"+ref)...)
			mediaType, platforms := registrytest.ListPlatforms(t, raw)
			if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
				t.Errorf("the operator image docker pushed to %s is a %s of %v, want a list of %v", ref, mediaType, platforms, want)
			}
		}

		// The operator image too: with docker, one image per platform, pushed, then `docker manifest create
		// --amend` and `docker manifest push` make the list (docker holds no list locally).
		out := dockerMake(append([]string{"IMAGE_TAG_BASE=" + base, "REGISTRY_CERT_DIR=" + certDir,
			"OPM_IMG=" + base + "-opm:docker", "docker-build", "docker-push"}, path...)...)
		for _, want := range []string{`(?m)^docker build --network none --no-cache -f bundle\.Dockerfile `,
			`(?m)^docker build .* -f catalog\.Dockerfile -t ` + regexp.QuoteMeta(base+"-catalog:v"+version) + ` `,
			`(?m)^docker push +` + regexp.QuoteMeta(base+"-catalog:v"+version) + `$`} {
			if !regexp.MustCompile(want).Match(out) {
				t.Errorf("make with CONTAINER_TOOL=docker ran no command matching %s:\n%s", want, tail(out, 40))
			}
		}
		servesBundle(t, clone, base, version, newest, committed, cas)
		expectList(base+":v"+version, "--cert-dir", certDir)

		// To the plain-HTTP registry on 127.0.0.1, the same images: the CLI's manifest commands read it only with
		// --insecure (docker_manifest_flags), which the TLS registry above does not get.
		for _, p := range []string{"linux-amd64", "linux-arm64"} {
			runIn(t, clone, "podman", "tag", base+":v"+version+"-"+p, plainBase+":v"+version+"-"+p)
		}
		out = dockerMake("IMAGE_TAG_BASE="+plainBase, "VERSION="+version, "docker-push")
		if want := "docker manifest push --insecure " + plainBase + ":v" + version; !strings.Contains(string(out), want) {
			t.Errorf("make docker-push to a plain-HTTP registry did not run %q:\n%s", want, tail(out, 20))
		}
		expectList(plainBase+":v"+version, "--tls-verify=false")

		// The TLS registry's certificate was verified, against that CA: without it, podman's service refuses to
		// push, and the CLI to read the registry.
		if err := os.Remove(caFile); err != nil {
			t.Fatal(err)
		}
		bundle := base + "-bundle:v" + version
		for what, args := range map[string][]string{"podman's service": {"push", bundle}, "the docker CLI": {"manifest", "inspect", bundle}} {
			c := exec.CommandContext(ctx, "docker", args...)
			c.Env = append(os.Environ(), docker...)
			out, err := c.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "x509: certificate signed by unknown authority") {
				t.Errorf("without the CA, %s (docker %s) did not fail on the registry's certificate: %v\n%s",
					what, strings.Join(args, " "), err, tail(out, 10))
			}
		}
	})
}

// servesBundle checks the catalog image base-catalog:vVERSION in its registry, as opm renders it (env added to
// opm's: trustingCA's): the bundle base-bundle:vVERSION is the head of stable, after the committed catalog's releases.
func servesBundle(t *testing.T, clone, base, version string, newest semver.Version, committed map[string]string, env []string) {
	t.Helper()
	catalogImg := base + "-catalog:v" + version
	render := exec.Command(filepath.Join(clone, "bin", "opm"), "render", catalogImg, "-o", "yaml")
	render.Env = append(append(os.Environ(), "HOME="+t.TempDir()), env...)
	out, err := render.Output()
	if err != nil {
		t.Fatalf("opm render %s: %v", catalogImg, err)
	}
	index := filepath.Join(t.TempDir(), "index.yaml")
	if err := os.WriteFile(index, out, 0o600); err != nil {
		t.Fatal(err)
	}
	served := registrytest.CatalogBundles(t, index)
	name := "operator101.v" + version
	doc, ok := served[name]
	if !ok || len(served) != len(committed)+1 {
		t.Fatalf("the catalog image holds %d bundles, want the %d released and %s", len(served), len(committed), name)
	}
	if !strings.Contains("\n"+doc, "\nimage: "+base+"-bundle:v"+version+"\n") {
		t.Errorf("%s in the catalog is not the bundle image bundle-push pushed, %s-bundle:v%s:\n%.400s", name, base, version, doc)
	}
	for released, d := range committed {
		if served[released] != d {
			t.Errorf("%s in the catalog image is not as the committed catalog has it", released)
		}
	}
	head := regexp.MustCompile(`(?m)^- name: ` + regexp.QuoteMeta(name) + `\n  replaces: operator101\.v` +
		regexp.QuoteMeta(newest.String()) + `\n  skipRange: '>=\S+ <` + regexp.QuoteMeta(version) + `'\n`)
	if !head.Match(out) {
		t.Errorf("the catalog image's stable channel has no entry for %s that replaces %s and skips every release", name, newest)
	}
}

// removeImages removes, when the test ends, every image in the image tests' store named under base.
func removeImages(t *testing.T, base string) {
	t.Cleanup(func() {
		out, err := exec.Command("podman", "images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", "reference="+base+"*").Output()
		if err != nil {
			t.Errorf("podman images: %v: the images named under %s stay in the store %s", err, base, os.Getenv("OPERATOR101_IMAGE_STORE"))
		}
		for _, img := range strings.Fields(string(out)) {
			_ = exec.Command("podman", "rmi", "--force", img).Run()
		}
	})
}

// trustingCA writes a file of the system's CAs and certDir's ca.crt beside certDir, and returns the environment
// that has Go programs (opm, the docker CLI) trust it.
func trustingCA(t *testing.T, certDir string) []string {
	t.Helper()
	system, _ := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	ca, err := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	cas := filepath.Join(filepath.Dir(certDir), "cas.pem")
	if err := os.WriteFile(cas, append(system, ca...), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"SSL_CERT_FILE=" + cas}
}

// dockerAPI serves podman's Docker-compatible API on a socket in dir until the test ends (runc for RUN steps,
// as OCI_RUNTIME=runc gives podman builds here), on the image tests' store (testenv.HoldImageStore). It trusts
// ca for registry (host:port) as dockerd trusts /etc/docker/certs.d/HOST:PORT/ca.crt (containers/image reads
// $HOME/.config/containers/certs.d/HOST:PORT first, for root too, and HOME is a directory of dir's), and reads
// plain (host:port) over plain HTTP, as dockerd reads a registry on 127.0.0.0/8. It returns the DOCKER_HOST for
// it, once the docker CLI gets an answer there, and the path of the CA it trusts.
func dockerAPI(t *testing.T, dir, registry, ca, plain string) (host, trusted string) {
	t.Helper()
	home := filepath.Join(dir, "home")
	trusted = filepath.Join(home, ".config", "containers", "certs.d", registry, "ca.crt")
	pem, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(trusted), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trusted, pem, 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "registries.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("[[registry]]\nlocation = %q\ninsecure = true\n", plain)), 0o600); err != nil {
		t.Fatal(err)
	}
	host = "unix://" + filepath.Join(dir, "docker.sock")
	cmd := exec.Command("podman", "--runtime", "runc", "system", "service", "--time=0", host)
	cmd.Env = append(os.Environ(), "HOME="+home, "CONTAINERS_REGISTRIES_CONF="+conf)
	logf, err := os.Create(filepath.Join(dir, "podman-service.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		v := exec.Command("docker", "version", "--format", "{{.Server.APIVersion}}")
		v.Env = append(os.Environ(), "DOCKER_HOST="+host, "DOCKER_CONFIG="+filepath.Join(dir, "config"))
		out, err := v.CombinedOutput()
		if err == nil {
			info := exec.Command("docker", "info", "--format", "{{.DockerRootDir}}")
			info.Env = v.Env
			out, err := info.Output()
			if want := filepath.Join(os.Getenv("OPERATOR101_IMAGE_STORE"), "storage"); err != nil || strings.TrimSpace(string(out)) != want {
				t.Fatalf("podman's Docker API keeps its images in %q (%v), not in the image tests' store %s", strings.TrimSpace(string(out)), err, want)
			}
			return host, trusted
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "podman-service.log"))
			t.Fatalf("podman's Docker API on %s did not answer: %v\n%s\n%s", host, err, out, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tail is the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
