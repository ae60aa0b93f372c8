# The file-based catalog image: opm serves catalog/ over gRPC for OLM's CatalogSource.
#
# OPM_IMAGE must hold /bin/opm (and /bin/grpc_health_probe for OLM's probes). With internet, the default
# upstream image works:  podman build -f catalog.Dockerfile -t CATALOG_IMG .
# Offline, `make catalog-build` (hack/images.sh) first builds a local opm image from bin/opm and passes it:
#     --build-arg OPM_IMAGE=localhost/operator101/opm:v1.64.0 --network none
# The upstream image is named by the digest of its tag's manifest list (test/images TestUpstreamImagesPinnedByDigest).
ARG OPM_IMAGE=quay.io/operator-framework/opm:v1.64.0@sha256:a070b901663d00312ccabe06a3c04b961d7326868499fe6c4c6b97025c79f014
FROM ${OPM_IMAGE}

ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]

ADD catalog /configs
# Pre-build the serving cache, so the catalog pod starts fast and a broken catalog fails the build.
# --pprof-addr= turns the profiling listener off: under --network none there is no localhost to bind.
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only", "--pprof-addr="]

LABEL operators.operatorframework.io.index.configs.v1=/configs
