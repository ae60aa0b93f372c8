# operator101 — see README.md. `make help` lists the targets.
# This file keeps the kubebuilder/operator-sdk go/v4 scaffold's targets and operator101's own few (demo, ci, catalog,
# release, verify-generated); the proving ground (cluster, fault injection, benchmarks) is in hack/lab.mk.

# VERSION is the bundle and operator version; a release pipeline sets it: make bundle VERSION=0.4.0
VERSION ?= 0.4.0
# CHANNELS / DEFAULT_CHANNEL go into the bundle's annotations. stable is the only channel, in the bundle and in the
# catalog (config/catalog); bundle annotations name only conventional channels (stable/fast/candidate), else the
# validators warn.
CHANNELS ?= stable
DEFAULT_CHANNEL ?= stable
BUNDLE_CHANNELS := --channels=$(CHANNELS)
BUNDLE_DEFAULT_CHANNEL := --default-channel=$(DEFAULT_CHANNEL)
BUNDLE_METADATA_OPTS ?= $(BUNDLE_CHANNELS) $(BUNDLE_DEFAULT_CHANNEL)

# IMAGE_TAG_BASE names every image: <base>:<version>, <base>-bundle:v<version>, <base>-catalog:v<version>. The
# default is the name the project publishes its releases under; this machine reaches no registry, so its lab
# holds them in the local registry, under the same path, as a disconnected cluster's mirror does
# (hack/registry.sh, MIRRORED). Publish your own build with IMAGE_TAG_BASE=<your registry>/<path>/operator101.
IMAGE_TAG_BASE ?= quay.io/operator101/operator101
IMG ?= $(IMAGE_TAG_BASE):v$(VERSION)
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:v$(VERSION)
# The container tool that builds and pushes the images: podman (the default), buildah or docker. Every build
# below runs from the repository root, as the scaffold's does (the Dockerfiles' contexts: .dockerignore).
CONTAINER_TOOL ?= podman
container_tool = $(notdir $(firstword $(CONTAINER_TOOL)))
# OFFLINE=1 (the default; this project's machines reach no registry): the operator image is the Dockerfile's
# `offline` stage, FROM scratch around a manager compiled here, and the catalog's base is an opm image built here
# from the pinned opm. OFFLINE=0: the Dockerfile's online stages (golang, distroless) and the upstream opm image,
# each named by the digest of its tag (test/images TestUpstreamImagesPinnedByDigest).
OFFLINE ?= 1
# PLATFORMS: the operator image is one manifest list of an image per platform, the architectures the Deployment's
# node affinity and the CSV's operatorframework.io/arch.* labels name (test/bundle keeps the three equal). The
# manager is static Go, cross-compiled for each platform (GOOS/GOARCH): nothing is emulated. Empty: one image,
# for this machine's platform, as before.
PLATFORMS ?= linux/amd64,linux/arm64
platforms = $(subst $(comma), ,$(PLATFORMS))
comma := ,
OPM_IMG ?= $(if $(filter 0,$(OFFLINE)),quay.io/operator-framework/opm:v1.64.0@sha256:a070b901663d00312ccabe06a3c04b961d7326868499fe6c4c6b97025c79f014,localhost/operator101/opm:v1.64.0)
# Offline builds reach no network and use no layer cache. podman and buildah also set every time in the image to
# SOURCE_DATE_EPOCH (the commit's), so a build is reproducible byte for byte; docker's builder has no such flag.
# OCI_RUNTIME picks podman's runtime for RUN steps (runc here: crun fails on cgroups v1 hybrid hosts).
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
OCI_RUNTIME ?=
BUILD_FLAGS ?= $(if $(filter 0,$(OFFLINE)),,--network none )--no-cache$(if $(filter docker,$(container_tool)),, --timestamp $(SOURCE_DATE_EPOCH))$(if $(and $(OCI_RUNTIME),$(filter podman buildah,$(container_tool))), --runtime $(OCI_RUNTIME))
# Pushes with podman or buildah take the one TLS rule every script here follows (hack/registry.sh tls_flags):
# verify the registry's certificate against the system's CAs, or REGISTRY_CERT_DIR's for IMAGE_TAG_BASE's registry
# (podman's --cert-dir), and skip verification only for a registry on this machine that is given no CA
# (localhost, 127.0.0.1, the local cluster's node address). docker push takes no TLS flags: the docker daemon
# decides (its insecure-registries and certs.d).
tls_flags_of = $(shell IMAGE_TAG_BASE='$(IMAGE_TAG_BASE)' REGISTRY_CERT_DIR='$(REGISTRY_CERT_DIR)' bash -c 'source hack/registry.sh && tls_flags "" "$$1"' - '$(1)')
push_flags = $(if $(filter docker,$(container_tool)),,$(call tls_flags_of,$(1)))
# docker's manifest commands reach the registry themselves, without the daemon's insecure-registries rule (which
# takes 127.0.0.0/8): --insecure where hack/registry.sh reads the registry over plain HTTP.
docker_manifest_flags = $(if $(findstring --tls-verify=false,$(call tls_flags_of,$(1))),--insecure)

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

LOCALBIN ?= $(CURDIR)/bin
ENVTEST_ASSETS ?= $(LOCALBIN)/k8s
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
KUSTOMIZE ?= $(LOCALBIN)/kustomize
KUBECTL ?= $(LOCALBIN)/kubectl
OPERATOR_SDK ?= $(LOCALBIN)/operator-sdk
OPM ?= $(LOCALBIN)/opm
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint
PROMTOOL ?= $(LOCALBIN)/promtool
TOOLS := hack/tools/install.sh
# Every go command -trimpath, as the images' and the tools' builds must be (reproducible): go build's cache keys
# differ with and without it, so go run and go test would otherwise compile every dependency a second time.
export GOFLAGS := $(strip $(filter-out -trimpath,$(GOFLAGS)) -trimpath)

# Tests run against the locally built etcd + kube-apiserver.
export KUBEBUILDER_ASSETS := $(ENVTEST_ASSETS)
# install, uninstall, deploy, undeploy and run act on the cluster kubectl talks to: $KUBECONFIG, else
# ~/.kube/config (its current context). Only where there is no kubeconfig at all do they fall back to the local
# API server that `make dev-apiserver` starts (make run starts it). Each first says which cluster it acts on.
DEV_DIR ?= $(LOCALBIN)/dev-apiserver
ifeq ($(strip $(KUBECONFIG)),)
ifneq ($(wildcard $(HOME)/.kube/config),)
KUBECONFIG := $(HOME)/.kube/config
else
KUBECONFIG := $(DEV_DIR)/kubeconfig
LOCAL_APISERVER := dev-apiserver
endif
# A make that this one runs (make ci's steps, hack/ci.sh) finds KUBECONFIG in its environment: this tells it
# that the value is the default, not the user's.
export KUBECONFIG_DEFAULT := $(KUBECONFIG)
endif
export KUBECONFIG
show-cluster = @echo "==> cluster: context $$($(KUBECTL) config current-context 2>/dev/null || echo '(none)'), server $$($(KUBECTL) config view --minify -o jsonpath='{.clusters[0].cluster.server}' 2>/dev/null) (kubeconfig $(KUBECONFIG))"
# make test-e2e and make demo work on the local cluster, or on a cluster of your own when KUBECONFIG comes from the
# environment or the command line (not the default above) with IMAGE_TAG_BASE: hack/cluster/target.sh.
given = $(if $(filter environment command line,$(origin $(1))),$(1)='$($(1))')
kubeconfig_given = $(if $(filter-out $(KUBECONFIG_DEFAULT),$(KUBECONFIG)),$(call given,KUBECONFIG))
TARGET_VARS = $(if $(kubeconfig_given),EXISTING_KUBECONFIG='$(KUBECONFIG)') $(call given,IMAGE_TAG_BASE)

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs and the ClusterRole from the kubebuilder markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/..." paths="./internal/controller/..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: docs
docs: manifests ## Generate the API reference (docs/reference/api.md) from the CRDs and api/'s condition reasons, and the metrics reference.
	go run ./hack/apidocs -crds config/crd/bases -api api -out docs/reference/api.md -metrics-out docs/reference/metrics.md

.PHONY: verify-generated
verify-generated: controller-gen kustomize operator-sdk opm ## Fail if generate/manifests/docs/bundle/catalog would change anything.
	hack/verify-generated.sh

.PHONY: fmt
fmt: ## Format the code (go fmt).
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint (.golangci.yml; the e2e and faults suites included).
	$(GOLANGCI_LINT) run ./...

.PHONY: test
test: envtest operator-sdk opm kustomize prometheus-crds ## Unit and envtest controller tests (go test -short): the edit-test loop; no root, no cluster, no package installs.
	go test -short ./... -count=1 -timeout 15m $(TEST_ARGS)

.PHONY: test-rules
test-rules: promtool ## Test the alert rules (config/prometheus/base/rules.yaml) with promtool test rules.
	go run ./hack/promrules -in config/prometheus/base/rules.yaml -out $(LOCALBIN)/operator101.rules.yaml
	$(PROMTOOL) check rules $(LOCALBIN)/operator101.rules.yaml
	$(PROMTOOL) test rules config/prometheus/tests/rules_test.yaml

.PHONY: test-e2e
test-e2e: ## End to end on the local cluster (or yours: KUBECONFIG, IMAGE_TAG_BASE) with real OLM: Subscription install, samples, upgrade, scorecard, uninstall, run bundle.
	$(TARGET_VARS) hack/cluster/e2e.sh

.PHONY: ci
ci: export CHAOS ?= 1
ci: ## Everything (.ci/run): no binaries tracked, generated files current, lint (gofmt and go vet included), alert rules, all Go tests, fault injection, OLM end to end and the chaos upgrade (needs root); prints each step's time and the total.
	hack/ci.sh check-tracked ci-tools+cluster-tools lint test-rules test-e2e+verify-generated+test-faults+test-go-others+test-go-images

.PHONY: build
build: manifests generate fmt vet ## Build the manager binary into bin/manager.
	go build -o $(LOCALBIN)/manager ./cmd

.PHONY: run
run: manifests generate fmt vet kubectl $(LOCAL_APISERVER) ## Run the manager here against kubectl's cluster (else a local API server; console logs, no leader election).
	$(show-cluster)
	OPERATOR_NAMESPACE=$${OPERATOR_NAMESPACE:-operator101-system} go run ./cmd --leader-elect=false --zap-devel --metrics-bind-address=127.0.0.1:8443 --health-probe-bind-address=127.0.0.1:8081

.PHONY: demo
demo: ## The main job: a local cluster with OLM (or yours: KUBECONFIG, IMAGE_TAG_BASE), operator101 installed from its catalog by a Subscription, the samples; prints what to type next.
	$(TARGET_VARS) hack/demo.sh

.PHONY: demo-down
demo-down: ## Stop everything make demo started (the cluster and the MariaDB; on a cluster of yours, what it installed).
	$(TARGET_VARS) hack/demo.sh down

##@ Build

# How the operator image is built and pushed: one image (no PLATFORMS), a manifest list in podman's or buildah's
# storage, or with docker an image per platform (IMG-OS-ARCH), joined into a list by docker manifest on push.
image_kind = $(if $(platforms),$(if $(filter docker,$(container_tool)),docker-list,list),single)

.PHONY: docker-build
docker-build: ## Build the operator image IMG for PLATFORMS, one manifest list (OFFLINE=1: FROM scratch around a static manager cross-compiled here; OFFLINE=0: the Dockerfile's online stages).
ifeq ($(OFFLINE)-$(image_kind),0-single)
	$(CONTAINER_TOOL) build $(BUILD_FLAGS) -t $(IMG) .
else ifeq ($(OFFLINE)-$(image_kind),0-list)
	$(CONTAINER_TOOL) build $(BUILD_FLAGS) --platform $(PLATFORMS) --manifest $(IMG) .
else ifeq ($(OFFLINE)-$(image_kind),0-docker-list)
	$(foreach p,$(platforms),$(CONTAINER_TOOL) build $(BUILD_FLAGS) --platform $(p) -t $(IMG)-$(subst /,-,$(p)) .$(newline))
else ifeq ($(image_kind),single)
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o $(LOCALBIN)/image/manager ./cmd
	$(CONTAINER_TOOL) build $(BUILD_FLAGS) --target offline -f Dockerfile -t $(IMG) $(LOCALBIN)/image
else
	$(if $(filter list,$(image_kind)),$(CONTAINER_TOOL) manifest rm $(IMG) >/dev/null 2>&1 || $(CONTAINER_TOOL) rmi --force $(IMG) >/dev/null 2>&1 || true$(newline)$(CONTAINER_TOOL) manifest create $(IMG)$(newline))
	$(foreach p,$(platforms),$(call offline_platform,$(p)))
endif

# offline_platform OS/ARCH: the manager cross-compiled for it, and its image (into the list IMG, or IMG-OS-ARCH).
define offline_platform
CGO_ENABLED=0 GOOS=$(word 1,$(subst /, ,$(1))) GOARCH=$(word 2,$(subst /, ,$(1))) go build -trimpath -ldflags "-s -w" -o $(LOCALBIN)/image/$(subst /,-,$(1))/manager ./cmd
$(CONTAINER_TOOL) build $(BUILD_FLAGS) --platform $(1) --target offline -f Dockerfile $(if $(filter list,$(image_kind)),--manifest $(IMG),-t $(IMG)-$(subst /,-,$(1))) $(LOCALBIN)/image/$(subst /,-,$(1))

endef
define newline


endef

.PHONY: docker-push
docker-push: ## Push the operator image (the manifest list and every image in it).
ifeq ($(image_kind),single)
	$(CONTAINER_TOOL) push $(call push_flags,$(IMG)) $(IMG)
else ifeq ($(image_kind),list)
	$(CONTAINER_TOOL) manifest push --all $(call push_flags,$(IMG)) $(IMG) docker://$(IMG)
else
	$(foreach p,$(platforms),$(CONTAINER_TOOL) push $(IMG)-$(subst /,-,$(p))$(newline))
	$(CONTAINER_TOOL) manifest create --amend $(call docker_manifest_flags,$(IMG)) $(IMG) $(foreach p,$(platforms),$(IMG)-$(subst /,-,$(p)))
	$(CONTAINER_TOOL) manifest push $(call docker_manifest_flags,$(IMG)) $(IMG)
endif

##@ Deployment

.PHONY: install
install: manifests kustomize kubectl $(LOCAL_APISERVER) ## Install the CRDs into kubectl's cluster (else a local API server).
	$(show-cluster)
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests kustomize kubectl ## Remove the CRDs from kubectl's cluster.
	$(show-cluster)
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: deploy
deploy: manifests kustomize kubectl ## Deploy the operator (image $IMG) to kubectl's cluster without OLM.
	$(show-cluster)
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG) docker.io/library/busybox=$(BUSYBOX_IMG)
	$(KUSTOMIZE) build config/deploy | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: kustomize kubectl ## Remove what deploy created.
	$(show-cluster)
	$(KUSTOMIZE) build config/deploy | $(KUBECTL) delete --ignore-not-found -f -

##@ Tools

.PHONY: controller-gen kustomize kubectl operator-sdk opm golangci-lint promtool prometheus-crds envtest
controller-gen: ; @$(TOOLS) controller-gen
golangci-lint: ; @$(TOOLS) golangci-lint
kustomize: ; @$(TOOLS) kustomize
kubectl: ; @$(TOOLS) kubectl
operator-sdk: ; @$(TOOLS) operator-sdk
opm: ; @$(TOOLS) opm
promtool: ; @$(TOOLS) promtool
prometheus-crds: controller-gen ## The Prometheus Operator's CRDs into bin/prometheus-crds (test/monitoring applies config/prometheus to them).
	@hack/tools/prometheus-crds.sh
envtest: ## Build etcd and kube-apiserver for envtest into bin/k8s.
	@LOCALBIN=$(ENVTEST_ASSETS) $(TOOLS) etcd kube-apiserver

##@ Bundle and catalog

# Related images besides those make bundle lists (the operator, the manager's RELATED_IMAGE_<NAME> variables and
# the images alm-examples name): name=image,...
RELATED_IMAGES ?=
# The image of the project's own scorecard test (test/scorecard/cmd/operator101-scorecard).
SCORECARD_IMG ?= $(IMAGE_TAG_BASE)-scorecard:v$(VERSION)
# What an At without an image runs (the manager's RELATED_IMAGE_BUSYBOX); a release gives it by digest.
BUSYBOX_IMG ?= docker.io/library/busybox:1.36
BUNDLE_DIR ?= bundle
# The OpenShift versions whose catalogs list the bundle (com.redhat.openshift.versions): 4.17 and later, the
# first on Kubernetes 1.30, the CSV's minKubeVersion.
OPENSHIFT_VERSIONS ?= v4.17
# What operator-sdk and kustomize cannot do to the bundle (hack/bundletool/main.go says why, command by command).
BUNDLETOOL := go run ./hack/bundletool

.PHONY: bundle
bundle: manifests kustomize operator-sdk ## Generate the OLM bundle (bundle/) for VERSION from config/, then validate it.
	@# The images, as operator-sdk's scaffold sets them: the operator's Deployment (and through a replacement
	@# the CSV's containerImage), and the operator101 scorecard test's image.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG) docker.io/library/busybox=$(BUSYBOX_IMG)
	cd config/scorecard && $(KUSTOMIZE) edit set image operator101-scorecard=$(SCORECARD_IMG)
	@# The CSV base's owned CRDs, from the +operator-sdk:csv:customresourcedefinitions markers in api/.
	$(OPERATOR_SDK) generate kustomize manifests -q --apis-dir api
	@# kustomize first, into a file: a failed build must not reach generate bundle (it would write an empty CSV);
	@# generate bundle wants its input on a pipe.
	$(KUSTOMIZE) build config/manifests > $(LOCALBIN)/bundle-input.yaml
	cat $(LOCALBIN)/bundle-input.yaml | $(OPERATOR_SDK) generate bundle -q --overwrite --version $(VERSION) $(BUNDLE_METADATA_OPTS) --output-dir $(BUNDLE_DIR)
	$(BUNDLETOOL) created-at -bundle $(BUNDLE_DIR)
	$(BUNDLETOOL) related-images -bundle $(BUNDLE_DIR) -extra '$(RELATED_IMAGES)'
	$(BUNDLETOOL) upgrade-edge -bundle $(BUNDLE_DIR) -catalog config/catalog/operator101.yaml
	$(BUNDLETOOL) metadata -bundle $(BUNDLE_DIR) -dockerfile bundle.Dockerfile -set com.redhat.openshift.versions=$(OPENSHIFT_VERSIONS)
	$(OPERATOR_SDK) bundle validate $(BUNDLE_DIR) --select-optional suite=operatorframework

.PHONY: bundle-build
bundle-build: ## Build the bundle image BUNDLE_IMG from bundle/ (make bundle VERSION=... IMG=... first).
	$(CONTAINER_TOOL) build $(BUILD_FLAGS) -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image.
	$(CONTAINER_TOOL) push $(call push_flags,$(BUNDLE_IMG)) $(BUNDLE_IMG)

.PHONY: release
release: ## Release VERSION from HEAD (committed, clean): images built with podman whatever CONTAINER_TOOL (reproducible), by digest, recorded in config/catalog (docs/contributing/packaging.md).
	IMAGE_TAG_BASE=$(IMAGE_TAG_BASE) hack/release.sh new $(VERSION)

.PHONY: catalog
catalog: opm ## Render catalog/operator101/ from config/catalog's released bundle images with opm, then validate it.
	IMAGE_TAG_BASE=$(IMAGE_TAG_BASE) OPM=$(OPM) hack/catalog.sh catalog

# BUNDLE_IMGS: the bundle images catalog-build adds to the committed catalog, as the scaffold's catalog-build adds
# its BUNDLE_IMGS to its base catalog: by default the one bundle-build built and bundle-push pushed (opm reads it
# from the registry), as the next version of the default channel. Empty: the committed catalog alone (the
# releases), nothing pulled. A version the committed catalog holds is served as released.
BUNDLE_IMGS ?= $(BUNDLE_IMG)
CATALOG_DIR ?= $(LOCALBIN)/catalog-build

.PHONY: catalog-build
catalog-build: $(if $(strip $(BUNDLE_IMGS)),opm) opm-image ## Build the catalog image CATALOG_IMG: catalog/ and BUNDLE_IMGS (default BUNDLE_IMG, pushed), served by opm (OPM_IMG).
ifneq ($(strip $(BUNDLE_IMGS)),)
	IMAGE_TAG_BASE=$(IMAGE_TAG_BASE) REGISTRY_CERT_DIR=$(REGISTRY_CERT_DIR) OPM=$(OPM) hack/catalog.sh dev $(CATALOG_DIR)/catalog $(subst $(comma), ,$(BUNDLE_IMGS))
	$(CONTAINER_TOOL) build $(BUILD_FLAGS) --build-arg OPM_IMAGE=$(OPM_IMG) -f catalog.Dockerfile -t $(CATALOG_IMG) $(CATALOG_DIR)
else
	$(CONTAINER_TOOL) build $(BUILD_FLAGS) --build-arg OPM_IMAGE=$(OPM_IMG) -f catalog.Dockerfile -t $(CATALOG_IMG) .
endif

.PHONY: opm-image
opm-image: ## Offline: build OPM_IMG (opm and grpc_health_probe from pinned modules) unless the tool has it.
ifneq ($(OFFLINE),0)
	@$(CONTAINER_TOOL) image inspect $(OPM_IMG) >/dev/null 2>&1 || CONTAINER_TOOL=$(CONTAINER_TOOL) hack/images.sh opm $(OPM_IMG)
endif

.PHONY: catalog-push
catalog-push: ## Push the catalog image.
	$(CONTAINER_TOOL) push $(call push_flags,$(CATALOG_IMG)) $(CATALOG_IMG)

.PHONY: scorecard
scorecard: operator-sdk envtest ## Run the scorecard suites (basic, olm, operator101) on this machine and print a table.
	go run ./test/scorecard/cmd/scorecard-local --bundle $(BUNDLE_DIR)

# The proving ground: what make ci runs beside make test, fault injection, benchmarks, the local API server and
# cluster. Included last, so that make help lists its sections after the scaffold's.
include hack/lab.mk
