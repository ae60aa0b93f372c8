# operator101's proving ground, included at the end of the root Makefile: the checks and test lanes that only
# `make ci` runs beside `make test`, fault injection, benchmarks, and the machinery they stand on (a local API
# server, a real single-node cluster on this machine, OLM, Debian packages for the image builds). The root
# Makefile keeps the kubebuilder/operator-sdk scaffold's targets and the project's own few; `make help` lists both.
# Variables shared with the root (LOCALBIN, ENVTEST_ASSETS, TOOLS, TEST_ARGS) are defined there.

##@ Lab: what make ci runs beside make test

.PHONY: check-tracked
check-tracked: ## Fail if git tracks a compiled binary or a file over 1 MiB (large generated files aside, listed in the script).
	hack/check-tracked-files.sh

.PHONY: tools
tools: start-beside envtest image-deps ## Build (or reuse from the cache) every tool the project needs.
	@$(TOOLS) controller-gen kustomize kubectl operator-sdk opm olm golangci-lint promtool
	@hack/tools/prometheus-crds.sh

# make ci's first step builds what the e2e needs, in two lanes (hack/ci.sh's ci-tools+cluster-tools, both from the
# start): one go build keeps both cores busy only while it compiles, so a second one fills its module downloads,
# loading and links. cluster-tools builds kube-node after Traefik, CoreDNS and grpc_health_probe, by when
# ci-tools has built kube-apiserver, with which it shares most packages (this order took 1164 s cold at 70b0b2c;
# kube-node right after kube-apiserver in ci-tools took 1219 s and 1333 s). lint and test-rules build their tools
# (golangci-lint, promtool) when they start, after this step.
.PHONY: ci-tools
ci-tools: start-beside envtest image-deps
	@$(TOOLS) controller-gen kustomize kubectl operator-sdk
	@hack/tools/prometheus-crds.sh

.PHONY: start-beside
start-beside:
	@[ -z "$${CI_START_BESIDE:-}" ] || touch "$$CI_START_BESIDE"

.PHONY: fmt-check
fmt-check: ## Fail if any Go file is not gofmt-formatted.
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*')); \
	if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi

.PHONY: test-go
test-go: envtest operator-sdk opm kustomize prometheus-crds image-deps ## All Go tests, not -short: make test's, plus those that need MariaDB, podman images or root.
	go test ./... -count=1 -timeout 30m $(TEST_ARGS)

# make ci runs test-go in two parts, both beside the e2e: the packages that build, tag and remove images, in a
# store of their own (hack/image-store.sh, in the tool cache, which testenv.HoldImageStore points podman, buildah
# and skopeo at), not podman's default one, where the e2e builds images of the same IDs; and the others.
IMAGE_TEST_PACKAGES = ./test/images ./test/release
GO_MODULE = $(shell go list -m)

.PHONY: test-go-images
test-go-images: envtest operator-sdk opm kustomize prometheus-crds image-deps ## test-go's packages that build images with podman (IMAGE_TEST_PACKAGES), in a store of their own.
	go test $(IMAGE_TEST_PACKAGES) -count=1 -timeout 30m $(TEST_ARGS)

.PHONY: test-go-others
test-go-others: envtest operator-sdk opm kustomize prometheus-crds image-deps ## test-go's other packages: none touches podman's image store.
	go test $$(go list ./... | grep -vxF $(foreach p,$(IMAGE_TEST_PACKAGES),-e $(GO_MODULE)/$(patsubst ./%,%,$(p)))) -count=1 -timeout 30m $(TEST_ARGS)

.PHONY: test-chaos
test-chaos: ## The chaos upgrade on the local cluster with real OLM (CHAOS_SEED replays a run, CHAOS_SCALE sizes it): faults during an upgrade.
	CHAOS_ONLY=1 $(TARGET_VARS) hack/cluster/e2e.sh

.PHONY: test-faults
test-faults: envtest ## Fault injection that needs minutes: random kills of the manager, API server restarts (test/faults, build tag faults).
	go test -tags faults ./test/faults/... -run '^($(FAULT_TESTS))$$' -count=1 -timeout 45m -v $(TEST_ARGS)

# The tests of test/faults' files with build tag faults: test-go already runs the package's others.
FAULT_TESTS = $(shell sed -nE 's/^func (Test[A-Za-z0-9_]*)[^A-Za-z0-9_].*/\1/p' $(shell grep -l '^//go:build faults' test/faults/*_test.go) | paste -sd'|' -)

.PHONY: image-deps
image-deps: ## Install podman, buildah, skopeo, runc, busybox-static and jq from Debian when missing.
	@hack/install-deps.sh

##@ Lab: measurement

.PHONY: bench
bench: envtest ## Measure convergence, API writes, At latency and memory at scale (hack/bench.sh; BENCH_ARGS, e.g. BENCH_ARGS="-n 100"); docs/contributing/performance.md.
	hack/bench.sh $(BENCH_ARGS)

##@ Lab: local API server (make run's)

.PHONY: dev-apiserver
dev-apiserver: envtest ## Start a local API server (etcd + kube-apiserver) with the CRDs installed; kubeconfig in bin/dev-apiserver/.
	hack/dev-apiserver.sh start

.PHONY: dev-apiserver-down
dev-apiserver-down: ## Stop the local API server.
	hack/dev-apiserver.sh stop

##@ Lab: local cluster (make demo's and make test-e2e's; needs root)

# A real single-node Kubernetes cluster on this machine (hack/cluster/, docs/contributing/cluster.md): etcd, the control plane,
# containerd + kubelet + kube-proxy, CoreDNS and a registry on 127.0.0.1:5000, all under CLUSTER_DIR.
CLUSTER_DIR ?= $(LOCALBIN)/cluster
CLUSTER_KUBECONFIG ?= $(CLUSTER_DIR)/kubeconfig

.PHONY: cluster-up
cluster-up: ## Start (idempotently) the local single-node cluster; kubeconfig in bin/cluster/kubeconfig.
	CLUSTER_DIR=$(CLUSTER_DIR) LOCALBIN=$(LOCALBIN) hack/cluster/up.sh

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and remove its state, bridges and iptables chains.
	CLUSTER_DIR=$(CLUSTER_DIR) LOCALBIN=$(LOCALBIN) hack/cluster/down.sh

.PHONY: cluster-smoke
cluster-smoke: ## Check the local cluster: a busybox pod Completes, a pod reaches the API server, a NodePort answers.
	CLUSTER_DIR=$(CLUSTER_DIR) LOCALBIN=$(LOCALBIN) hack/cluster/smoke.sh

.PHONY: cluster-images
cluster-images: ## Build the local cluster's images (pause, busybox, web) offline and push them to its registry.
	hack/cluster/images.sh

.PHONY: cluster-tools
cluster-tools: ## Build the local cluster's binaries (kubelet, kube-proxy, controller-manager, scheduler, CoreDNS, grpc_health_probe, Traefik, OLM and opm).
	@$(TOOLS) cluster etcd kube-apiserver kubectl olm opm

.PHONY: olm-install
olm-install: ## Install OLM v0.41.0 on the local cluster from its released manifests, with locally built images.
	hack/cluster/olm.sh

.PHONY: traefik-install
traefik-install: ## Install Traefik v3.6.12 (IngressClass, GatewayClass and Gateway traefik) on the local cluster.
	CLUSTER_DIR=$(CLUSTER_DIR) LOCALBIN=$(LOCALBIN) hack/cluster/traefik.sh
