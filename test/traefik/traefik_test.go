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

// Package traefik_test runs the Traefik binary the local cluster deploys (bin/traefik, hack/tools/install.sh
// traefik) against an API server (envtest, with the Gateway API standard CRDs), with the RBAC, IngressClass,
// GatewayClass, Gateway and flags of hack/cluster/traefik/*.yaml, as the ServiceAccount the manifests bind:
// an Ingress and an HTTPRoute to a Service whose EndpointSlice points at an HTTP server on 127.0.0.1 are served
// by host name over TLS, and Traefik writes their status. What it does not prove is the cluster's part: the
// image, the pod under restricted-v2, the NodePort (test/e2e's RoutesThroughTraefik does, once run).
package traefik_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/operator101/operator101/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	root, err := testenv.RepoRoot()
	if err == nil {
		var dir string
		if dir, err = gatewayAPIDir(root); err == nil {
			var crds []string
			// Every CRD of the standard channel (Traefik watches GRPCRoutes, ReferenceGrants and
			// BackendTLSPolicies too); not the safe-upgrades admission policy beside them.
			crds, err = filepath.Glob(filepath.Join(dir, "gateway.networking.k8s.io_*s.yaml"))
			if err == nil {
				os.Exit(testenv.RunWith(m, &env, crds...))
			}
		}
	}
	fmt.Fprintf(os.Stderr, "traefik: %v\n", err)
	os.Exit(1)
}

func gatewayAPIDir(root string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating sigs.k8s.io/gateway-api: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard"), nil
}

const (
	webHost = "web.ingress.operator101.test"
	appHost = "app.gateway.operator101.test"
	tenant  = "tenant"
	// The status address the manifests' flags give (the local cluster's node address).
	nodeIP = "198.18.255.254"
)

func TestTraefikRoutesByHostOverTLS(t *testing.T) {
	ctx := context.Background()
	bin := filepath.Join(env.Root, "bin", "traefik")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no %s: build it with hack/tools/install.sh traefik (a cold build takes about 15 minutes of CPU)", bin)
	}
	c := env.Client

	// The manifests of hack/cluster/traefik, but the Deployment, whose args are kept for the command line.
	var args []string
	for _, file := range []string{"traefik.yaml", "gateway.yaml"} {
		for _, u := range readManifests(t, filepath.Join(env.Root, "hack", "cluster", "traefik", file)) {
			if u.GetKind() == "Deployment" {
				var d appsv1.Deployment
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
					t.Fatal(err)
				}
				args = d.Spec.Template.Spec.Containers[0].Args
				continue
			}
			if u.GetKind() == "Gateway" {
				// The Gateway is made below, once the entry point's port is known.
				continue
			}
			if err := c.Create(ctx, u); err != nil {
				t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		}
	}
	for _, want := range []string{"--global.checknewversion=false", "--global.sendanonymoususage=false"} {
		if !contains(args, want) {
			t.Errorf("the Deployment's args %q lack %s: Traefik would call home", args, want)
		}
	}

	// Traefik's identity: the ServiceAccount the ClusterRoleBinding names, by a token the API server issues.
	cs := kubernetes.NewForConfigOrDie(env.Config)
	tr, err := cs.CoreV1().ServiceAccounts("traefik").CreateToken(ctx, "traefik",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "token"), []byte(tr.Status.Token))
	write(t, filepath.Join(dir, "ca.crt"), env.Config.CAData)

	// The backend: an HTTP server that Services without selectors reach through EndpointSlices. An
	// EndpointSlice may not hold a loopback address, so it listens on this machine's own address (an ephemeral
	// port, for the test's seconds), not on one of the local cluster's.
	hostIP := machineAddress(t)
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<h1>backend for %s</h1>\n", r.Host)
	}))
	l, err := net.Listen("tcp", net.JoinHostPort(hostIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	backend.Listener = l
	backend.Start()
	t.Cleanup(backend.Close)
	backendPort := int32(l.Addr().(*net.TCPAddr).Port)

	ca := newCA(t)
	mustCreate(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant}})
	for _, name := range []string{"web", "app"} {
		mustCreate(t, c, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP,
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intOrPort(backendPort)}}}})
		mustCreate(t, c, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant,
			Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{hostIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(backendPort), Protocol: ptr.To(corev1.ProtocolTCP)}}})
	}
	// An Ingress as the operator makes it for a MyWeb's spec.ingress (class traefik, the tenant's TLS Secret).
	mustCreate(t, c, tlsSecret(t, ca, tenant, "web-tls", webHost))
	mustCreate(t, c, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: tenant},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("traefik"),
			TLS: []networkingv1.IngressTLS{{Hosts: []string{webHost}, SecretName: "web-tls"}},
			Rules: []networkingv1.IngressRule{{Host: webHost, IngressRuleValue: networkingv1.IngressRuleValue{
				HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/",
					PathType: ptr.To(networkingv1.PathTypePrefix), Backend: networkingv1.IngressBackend{
						Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}})

	// Traefik, with the Deployment's flags: its entry points on free loopback ports instead of :8443 and :9000,
	// and both providers pointed at this API server as the ServiceAccount.
	websecure, ping := freePort(t), freePort(t)
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--entrypoints.websecure.address="):
			args[i] = fmt.Sprintf("--entrypoints.websecure.address=127.0.0.1:%d", websecure)
		case strings.HasPrefix(a, "--entrypoints.traefik.address="):
			args[i] = fmt.Sprintf("--entrypoints.traefik.address=127.0.0.1:%d", ping)
		}
	}
	for _, p := range []string{"kubernetesingress", "kubernetesgateway"} {
		args = append(args, "--providers."+p+".endpoint="+env.Config.Host,
			"--providers."+p+".token="+filepath.Join(dir, "token"),
			"--providers."+p+".certauthfilepath="+filepath.Join(dir, "ca.crt"))
	}
	logs := startTraefik(t, bin, args)
	defer func() {
		// A rule the ClusterRole lacks shows as a refused list or watch in the log, even where the routes work.
		if strings.Contains(logs.String(), "forbidden") {
			t.Errorf("Traefik was refused a request (the ClusterRole of traefik.yaml)")
		}
		if t.Failed() || os.Getenv("TRAEFIK_LOG") != "" {
			t.Logf("traefik's log:\n%s", logs.String())
		}
	}()

	// The Gateway of gateway.yaml, its listener on the websecure entry point's port (as 8443 is on the
	// cluster), TLS from traefik/gateway-tls; an HTTPRoute as the operator makes it for spec.httpRoute.
	mustCreate(t, c, tlsSecret(t, ca, "traefik", "gateway-tls", appHost))
	for _, u := range readManifests(t, filepath.Join(env.Root, "hack", "cluster", "traefik", "gateway.yaml")) {
		if u.GetKind() != "Gateway" {
			continue
		}
		listeners, _, _ := unstructured.NestedSlice(u.Object, "spec", "listeners")
		if len(listeners) != 1 || fmt.Sprint(listeners[0].(map[string]any)["port"]) != "8443" {
			t.Fatalf("gateway.yaml's listeners: %v, want one on port 8443", listeners)
		}
		listeners[0].(map[string]any)["port"] = int64(websecure)
		if err := unstructured.SetNestedSlice(u.Object, listeners, "spec", "listeners"); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, c, u)
	}
	route := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": "app", "namespace": tenant},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "traefik", "namespace": "traefik"}},
			"hostnames":  []any{appHost},
			"rules": []any{map[string]any{
				"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}},
				"backendRefs": []any{map[string]any{"name": "app", "port": int64(80)}},
			}},
		},
	}}
	mustCreate(t, c, route)

	// Traefik's status writes: the node address on the Ingress (IngressAdmitted), Accepted on the HTTPRoute's
	// parent (HTTPRouteAdmitted), Programmed on the Gateway.
	eventually(t, "the Ingress's status address is "+nodeIP, func() (bool, string) {
		var ing networkingv1.Ingress
		if err := c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "web"}, &ing); err != nil {
			return false, err.Error()
		}
		lb := ing.Status.LoadBalancer.Ingress
		return len(lb) == 1 && lb[0].IP == nodeIP, fmt.Sprint(lb)
	})
	eventually(t, "the HTTPRoute accepted by the Gateway traefik/traefik", func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(route), route); err != nil {
			return false, err.Error()
		}
		parents, _, _ := unstructured.NestedSlice(route.Object, "status", "parents")
		for _, p := range parents {
			conds, _, _ := unstructured.NestedSlice(p.(map[string]any), "conditions")
			for _, cond := range conds {
				m := cond.(map[string]any)
				if m["type"] == "Accepted" && m["status"] == "True" {
					return true, ""
				}
			}
		}
		return false, fmt.Sprint(parents)
	})
	gw := &unstructured.Unstructured{}
	gw.SetAPIVersion("gateway.networking.k8s.io/v1")
	gw.SetKind("Gateway")
	eventually(t, "the Gateway Programmed", func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "traefik", Name: "traefik"}, gw); err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(gw.Object, "status", "conditions")
		for _, cond := range conds {
			m := cond.(map[string]any)
			if m["type"] == "Programmed" && m["status"] == "True" {
				return true, ""
			}
		}
		return false, fmt.Sprint(conds)
	})

	// Each page by host name over TLS, the certificate verified against the test's CA.
	for _, host := range []string{webHost, appHost} {
		get(t, fmt.Sprintf("127.0.0.1:%d", websecure), ca.pool, host, "<h1>backend for "+host+"</h1>")
	}
	// A host no route names gets no page.
	hc := client443(fmt.Sprintf("127.0.0.1:%d", websecure), nil, "other.operator101.test")
	hc.Transport.(*http.Transport).TLSClientConfig.InsecureSkipVerify = true
	if resp, err := hc.Get("https://other.operator101.test/"); err != nil {
		t.Errorf("GET an unrouted host: %v", err)
	} else {
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("an unrouted host got %d, want 404", resp.StatusCode)
		}
	}
}

// startTraefik runs bin with args until the test ends, and waits until its ping entry point answers.
func startTraefik(t *testing.T, bin string, args []string) *syncBuffer {
	t.Helper()
	logs := &syncBuffer{}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	var pingAddr string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--entrypoints.traefik.address="); ok {
			pingAddr = v
		}
	}
	eventually(t, "traefik answers /ping", func() (bool, string) {
		resp, err := http.Get("http://" + pingAddr + "/ping")
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return logs
}

func get(t *testing.T, addr string, roots *x509.CertPool, host, want string) {
	t.Helper()
	hc := client443(addr, roots, host)
	eventually(t, "GET https://"+host+"/", func() (bool, string) {
		resp, err := hc.Get("https://" + host + "/")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), want),
			fmt.Sprintf("%d %q", resp.StatusCode, body)
	})
}

// client443 dials addr whatever the URL's host, with SNI serverName, verifying against roots.
func client443(addr string, roots *x509.CertPool, serverName string) *http.Client {
	var d net.Dialer
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12},
	}}
}

func eventually(t *testing.T, what string, check func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, state := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %s; last: %s", what, state)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func readManifests(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
	return out
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func write(t *testing.T, file string, data []byte) {
	t.Helper()
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// machineAddress is an IPv4 address of an interface of this machine that is up and neither loopback nor the
// local cluster's (o101-*, its pods' veths).
func machineAddress(t *testing.T) string {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 ||
			strings.HasPrefix(iface.Name, "o101-") || strings.HasPrefix(iface.Name, "veth") {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && ipn.IP.IsGlobalUnicast() {
				return ipn.IP.String()
			}
		}
	}
	t.Skip("no IPv4 address on this machine but loopback's, which an EndpointSlice may not hold")
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newCA(t *testing.T) *ca {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "traefik test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &ca{cert: cert, key: key, pool: pool}
}

// tlsSecret is a kubernetes.io/tls Secret ns/name with a certificate of ca for host.
func tlsSecret(t *testing.T, ca *ca, ns, name, host string) *corev1.Secret {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host},
		DNSNames: []string{host}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		}}
}

func intOrPort(p int32) intstr.IntOrString { return intstr.FromInt32(p) }

// syncBuffer is a bytes.Buffer safe for the process's two writers and the test's reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
