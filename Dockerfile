# The operator image. Two ways to build it:
#
#  * With internet (a release pipeline): the usual multi-stage build, compiled in a Go image and run on
#    distroless, as the last stage (the default target):
#        podman build -t IMG .            (or docker build)
#  * Offline (this project's machines, `make docker-build`): hack/images.sh compiles a static binary on the host
#    and builds the first stage, `offline`, from a context that holds only that binary:
#        podman build --network none --target offline -f Dockerfile -t IMG CONTEXT_WITH_manager
#    once per platform (a binary cross-compiled for it, --platform OS/ARCH, --manifest IMG) for a manifest list.
#    The stage is FROM scratch, so nothing is pulled. It comes first so that building it never touches the
#    online stages.
# Both run /manager as UID 65532, numeric and non-root: the Deployment sets runAsNonRoot and no runAsUser (so
# that OpenShift can give it a UID of the namespace's range), and the kubelet checks runAsNonRoot against a
# numeric USER only (test/images TestImageUsersAreNumericNonRoot).
# The online stages' base images are named by digest, the tag kept for the reader: a tag can be moved to other
# content, a digest cannot (test/images TestUpstreamImagesPinnedByDigest). To move to a newer image, pin the
# digest of its tag's manifest list (skopeo inspect --raw docker://IMAGE:TAG | sha256sum); golang's must be at
# least go.mod's go version, or the build downloads a toolchain.

FROM scratch AS offline
COPY manager /manager
USER 65532:65532
LABEL org.opencontainers.image.title="operator101" \
      org.opencontainers.image.description="operator101: MyWeb, AppService, At and DatabaseUser controllers" \
      org.opencontainers.image.source="https://github.com/operator101/operator101" \
      org.opencontainers.image.licenses="Apache-2.0"
ENTRYPOINT ["/manager"]

# The builder runs on the build machine's platform and cross-compiles for the target's (static Go), so that
# `--platform linux/amd64,linux/arm64` builds each image without emulating the other architecture.
FROM --platform=$BUILDPLATFORM docker.io/library/golang:1.26.5@sha256:3aff6657219a4d9c14e27fb1d8976c49c29fddb70ba835014f477e1c70636647 AS builder
ARG TARGETOS
ARG TARGETARCH
WORKDIR /workspace
# Modules first, so a source change reuses the module download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY api/ api/
COPY internal/ internal/
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags "-s -w" -o manager ./cmd

FROM gcr.io/distroless/static:nonroot@sha256:f7f8f729987ad0fdf6b05eeeae94b26e6a0f613bdf46feea7fc40f7bd72953e6 AS online
COPY --from=builder /workspace/manager /manager
USER 65532:65532
LABEL org.opencontainers.image.title="operator101" \
      org.opencontainers.image.description="operator101: MyWeb, AppService, At and DatabaseUser controllers" \
      org.opencontainers.image.source="https://github.com/operator101/operator101" \
      org.opencontainers.image.licenses="Apache-2.0"
ENTRYPOINT ["/manager"]
