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

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/operator-framework/api/crds"
	apiv2 "github.com/operator-framework/api/pkg/operators/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/operator101/operator101/api"
	"github.com/operator101/operator101/test/bench/benchutil"
	"github.com/operator101/operator101/test/testenv"
)

// Users of the bench's API server. The audit log tells their requests apart.
const (
	benchUser      = "bench"
	managerUser    = "operator101-manager"
	lowerboundUser = "bench-lowerbound"
	peerUser       = "bench-peer"
)

// apiServer is one etcd + kube-apiserver, with an audit log of every write.
type apiServer struct {
	env       *envtest.Environment
	dir       string
	auditLog  string
	config    *rest.Config // the bench's own user, no client-side rate limit
	managerKC string       // kubeconfig file of the manager's user
	lowerKC   string       // kubeconfig file of the lower bound's user
	peerKC    string       // kubeconfig file of the peer contender's user
	scheme    *runtime.Scheme
	childPIDs []int
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(api.AddToScheme(s))
	utilruntime.Must(apiv2.AddToScheme(s))
	return s
}

// startAPIServer starts etcd and kube-apiserver on loopback, installs the CRDs (operator101's from crdDir, the
// files or directories of extraCRDs, and OLM's OperatorCondition for the Upgradeable gate), and creates the
// users.
func startAPIServer(assets, crdDir string, extraCRDs []string, dir string) (*apiServer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &apiServer{dir: dir, auditLog: filepath.Join(dir, "audit.log"), scheme: newScheme()}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(benchutil.AuditPolicy), 0o644); err != nil {
		return nil, err
	}
	s.env = &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     append([]string{crdDir}, extraCRDs...),
		CRDs:                  []*apiextensionsv1.CustomResourceDefinition{crds.OperatorCondition()},
		ErrorIfCRDPathMissing: true,
		Scheme:                s.scheme,
	}
	args := s.env.ControlPlane.GetAPIServer().Configure()
	args.Set("bind-address", "127.0.0.1")
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", s.auditLog)
	args.Set("audit-log-format", "json")
	// No rotation (the default rotates at 100 MB, about 80,000 writes); parseAudit reads rotated files too.
	args.Set("audit-log-maxsize", "100000")
	// Every bench Service asks for an explicit port of its own from a range wider than a cluster's default, so
	// that N=3000 fits (see benchutil.Plan).
	// envtest's default Service range is a /24: 254 cluster IPs.
	args.Set("service-cluster-ip-range", "10.96.0.0/16")
	args.Set("service-node-port-range", fmt.Sprintf("%d-%d", benchutil.FirstNodePort, benchutil.LastNodePort))
	cfg, err := s.env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting etcd and kube-apiserver: %w", err)
	}
	// What the bench's cleanup kills should the bench itself die (hack/bench.sh reads the pid file).
	if s.childPIDs, err = testenv.Children(os.Getpid()); err != nil {
		s.stop()
		return nil, err
	}
	u, err := s.env.AddUser(envtest.User{Name: benchUser, Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("adding user %s: %w", benchUser, err)
	}
	s.config = u.Config()
	s.config.QPS, s.config.Burst = -1, 0
	for name, path := range map[string]*string{managerUser: &s.managerKC, lowerboundUser: &s.lowerKC, peerUser: &s.peerKC} {
		u, err := s.env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, cfg)
		if err != nil {
			s.stop()
			return nil, fmt.Errorf("adding user %s: %w", name, err)
		}
		kc, err := u.KubeConfig()
		if err != nil {
			s.stop()
			return nil, err
		}
		*path = filepath.Join(dir, name+".kubeconfig")
		if err := os.WriteFile(*path, kc, 0o600); err != nil {
			s.stop()
			return nil, err
		}
	}
	return s, nil
}

// startServer starts an API server for one contender in dir, and a client of it as the bench's user. Every
// contender gets a fresh one: the same requests cost an API server more once it has served another contender's
// objects, even after they are deleted (docs/contributing/performance.md "Method"), and a contender that ran later on a shared
// server would pay for the ones before it.
func startServer(o options, dir string) (*apiServer, client.Client, error) {
	srv, err := startAPIServer(o.assets, o.crds, o.extraCRDs, dir)
	if err != nil {
		return nil, nil, err
	}
	addPids(o.pidfile, srv.childPIDs...)
	c, err := client.New(srv.config, client.Options{Scheme: srv.scheme})
	if err != nil {
		srv.stop()
		return nil, nil, err
	}
	return srv, c, nil
}

// cpuSeconds is the CPU time etcd and kube-apiserver have spent since they started: what the contenders'
// requests and watches cost the server, which shares the machine's cores with them.
func (s *apiServer) cpuSeconds() float64 {
	var sum float64
	for _, pid := range s.childPIDs {
		sum += cpuOf(pid)
	}
	return sum
}

// profile takes a CPU profile of kube-apiserver over the next seconds from its /debug/pprof (on by default),
// as the bench's user, and saves it with its top entries by cumulative time (saveProfile): which requests the
// server's CPU went to.
func (s *apiServer) profile(ctx context.Context, seconds int, dir, name, assets string) (string, error) {
	b, err := s.get(ctx, "/debug/pprof/profile", "seconds", fmt.Sprint(seconds))
	if err != nil {
		return "", fmt.Errorf("profiling kube-apiserver: %w", err)
	}
	return saveProfile(b, dir, name, filepath.Join(assets, "kube-apiserver"), "-top", "-cum", "-nodecount=40")
}

// serverCounts are the counters of kube-apiserver's /metrics the bench compares over a window: the reads it
// sent to etcd (its etcd_request_duration_seconds histogram, operation "get": the reads its watch cache did not
// answer), and by resource the watches it closed because their client did not read their events fast enough
// (apiserver_terminated_watchers_total).
type serverCounts struct {
	etcdReads      float64
	watchersClosed map[string]float64
}

// counts reads the counters, in one request to /metrics.
func (s *apiServer) counts(ctx context.Context) (serverCounts, error) {
	b, err := s.get(ctx, "/metrics")
	if err != nil {
		return serverCounts{}, fmt.Errorf("reading kube-apiserver's metrics: %w", err)
	}
	text := string(b)
	return serverCounts{
		etcdReads:      benchutil.MetricSum(text, "etcd_request_duration_seconds_count", "operation")["get"],
		watchersClosed: benchutil.MetricSum(text, "apiserver_terminated_watchers_total", "resource"),
	}, nil
}

// watchersClosed is what after counts more than before, by resource, leaving out resources with none; nil
// when either count is missing.
func watchersClosed(before, after map[string]float64) map[string]float64 {
	if before == nil || after == nil {
		return nil
	}
	out := map[string]float64{}
	for r, n := range after {
		if d := n - before[r]; d > 0 {
			out[r] = d
		}
	}
	return out
}

// markCounts returns what gives the counters' growth from now on: etcd reads -1 and watches closed nil when
// the metrics cannot be read at either end (no figure rather than a wrong one).
func (s *apiServer) markCounts(ctx context.Context) func() serverCounts {
	c0, err0 := s.counts(ctx)
	return func() serverCounts {
		c1, err1 := s.counts(ctx)
		if err0 != nil || err1 != nil {
			logf("counting the reads sent to etcd and the watches closed: %v", errors.Join(err0, err1))
			return serverCounts{etcdReads: -1}
		}
		return serverCounts{etcdReads: c1.etcdReads - c0.etcdReads,
			watchersClosed: watchersClosed(c0.watchersClosed, c1.watchersClosed)}
	}
}

// get reads one of kube-apiserver's non-resource paths as the bench's user (a member of system:masters).
func (s *apiServer) get(ctx context.Context, path string, params ...string) ([]byte, error) {
	cfg := rest.CopyConfig(s.config)
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req := rc.Get().AbsPath(path)
	for i := 0; i+1 < len(params); i += 2 {
		req = req.Param(params[i], params[i+1])
	}
	return req.DoRaw(ctx)
}

func (s *apiServer) stop() {
	if s == nil || s.env == nil {
		return
	}
	if err := s.env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: stopping the API server: %v\n", err)
	}
	s.env = nil
}
