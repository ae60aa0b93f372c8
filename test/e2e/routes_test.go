//go:build e2e

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

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/operator101/operator101/api/app/v1"
	"github.com/operator101/operator101/api/conditions"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
)

// What hack/cluster/traefik.sh installs (hack/cluster/traefik/*.yaml).
const (
	traefikNS         = "traefik"
	traefikClass      = "traefik" // the IngressClass
	traefikGateway    = "traefik" // the Gateway, in traefikNS
	traefikGatewayTLS = "gateway-tls"
	traefikNodePort   = 30443 // the Service's NodePort to Traefik's HTTPS entry point, on the node address
)

// routesThroughTraefik does, as a tenant following docs/guides/myweb.md, what issue 55 asks of a route end to end:
// a MyWeb with spec.ingress (class traefik, TLS from the tenant's Secret) and an AppService with spec.httpRoute
// (the platform's Gateway traefik/traefik), both with a ClusterIP Service and no node port; each condition
// (IngressAdmitted, HTTPRouteAdmitted) True from Traefik's own status writes, and each page fetched through
// Traefik by host name over TLS, the certificate verified against a CA this test makes.
func routesThroughTraefik(t *testing.T) {
	ctx := context.Background()
	if os.Getenv("E2E_TRAEFIK") != "1" {
		t.Skip("hack/cluster/e2e.sh installed no Traefik (TRAEFIK=0, or a cluster of your own)")
	}
	if err := get(&networkingv1.IngressClass{}, "", traefikClass); err != nil {
		t.Fatalf("the IngressClass %s that hack/cluster/traefik.sh makes: %v", traefikClass, err)
	}
	gw := &unstructured.Unstructured{}
	gw.SetGroupVersionKind(schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"})
	if err := get(gw, traefikNS, traefikGateway); err != nil {
		t.Fatalf("the Gateway %s/%s that hack/cluster/traefik.sh makes: %v", traefikNS, traefikGateway, err)
	}

	const (
		webName, webHost = "routed-web", "web.ingress.operator101.test"
		appName, appHost = "routed-app", "app.gateway.operator101.test"
		webPage          = "<h1>through Traefik's Ingress</h1>"
	)
	ca := newTestCA(t)

	// The platform's part: the Gateway's listener serves a certificate of the test's CA for appHost.
	setTLSSecret(t, c, traefikNS, traefikGatewayTLS, ca, appHost)

	// The tenant's part, as the guide says it: a TLS Secret, a MyWeb with an Ingress, an AppService with an
	// HTTPRoute to the platform's Gateway; no node port.
	tenant := tenantClient(t)
	setTLSSecret(t, tenant, samplesNS, webName+"-tls", ca, webHost)
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: webName + "-tls", Namespace: samplesNS}})
	})
	web := &operatorv1.MyWeb{ObjectMeta: metav1.ObjectMeta{Name: webName, Namespace: samplesNS},
		Spec: operatorv1.MyWebSpec{Image: "nginx", PageContentHtml: webPage + "\n",
			ServiceType: operatorv1.ServiceTypeClusterIP,
			Ingress:     &operatorv1.Ingress{Host: webHost, ClassName: traefikClass, TLSSecretName: webName + "-tls"}}}
	app := &appv1.AppService{ObjectMeta: metav1.ObjectMeta{Name: appName, Namespace: samplesNS},
		Spec: appv1.AppServiceSpec{Size: ptr.To[int32](1), Application: appv1.Application{Image: "nginx:1.27",
			ServiceType: appv1.ServiceTypeClusterIP, Ports: []appv1.ServicePort{{Port: 80}},
			HTTPRoute: &appv1.HTTPRoute{ParentRefs: []appv1.ParentReference{{Name: traefikGateway, Namespace: traefikNS}},
				Hostnames: []string{appHost}}}}}
	for _, obj := range []client.Object{web, app} {
		if err := tenant.Create(ctx, obj); err != nil {
			t.Fatalf("the tenant's create of %T %s: %v", obj, obj.GetName(), err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
	}

	waitCondition(t, &operatorv1.MyWeb{}, samplesNS, webName, conditions.IngressAdmitted)
	// The operator looks for the Gateway API when it starts: one started before traefik.sh installed the CRDs
	// says HTTPRouteNotServed, and its admin restarts it as the guide says (here: its pods are deleted, as OLM
	// owns the Deployment).
	eventually(t, 2*time.Minute, "AppService "+appName+" HTTPRouteAdmitted decided", func() (bool, string) {
		var a appv1.AppService
		if err := get(&a, samplesNS, appName); err != nil {
			return false, err.Error()
		}
		cond := meta.FindStatusCondition(a.Status.Conditions, conditions.HTTPRouteAdmitted)
		if cond == nil {
			return false, "no condition yet"
		}
		return cond.Status == metav1.ConditionTrue || cond.Reason == conditions.ReasonHTTPRouteNotServed,
			fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
	})
	var a appv1.AppService
	if err := get(&a, samplesNS, appName); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(a.Status.Conditions, conditions.HTTPRouteAdmitted); cond.Reason == conditions.ReasonHTTPRouteNotServed {
		t.Logf("the operator started before the Gateway API CRDs: restarting it")
		if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(opNS),
			client.MatchingLabels{"control-plane": "controller-manager"}); err != nil {
			t.Fatal(err)
		}
	}
	waitCondition(t, &appv1.AppService{}, samplesNS, appName, conditions.HTTPRouteAdmitted)

	// No node port on either Service.
	for _, name := range []string{webName, appName} {
		var svc corev1.Service
		if err := get(&svc, samplesNS, name); err != nil {
			t.Fatal(err)
		}
		if svc.Spec.Type != corev1.ServiceTypeClusterIP {
			t.Errorf("Service %s is %s, want ClusterIP", name, svc.Spec.Type)
		}
	}
	if err := get(web, samplesNS, webName); err != nil {
		t.Fatal(err)
	}
	if want := "https://" + webHost + "/"; web.Status.URL != want {
		t.Errorf("MyWeb status.url is %q, want %q", web.Status.URL, want)
	}

	fetchThroughTraefik(t, ca.pool, webHost, webPage)
	fetchThroughTraefik(t, ca.pool, appHost, "<h1>operator101 web</h1>") // the web image's own index.html
}

// fetchThroughTraefik GETs https://host/ from Traefik's NodePort on the node address, whatever host resolves
// to (nothing does: the names exist only in the routes), with SNI host and the server's certificate verified
// against roots, until the body contains want.
func fetchThroughTraefik(t *testing.T, roots *x509.CertPool, host, want string) {
	t.Helper()
	addr := net.JoinHostPort(f.nodeIP, fmt.Sprint(traefikNodePort))
	var d net.Dialer
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12},
	}}
	url := "https://" + host + "/"
	pollGet(t, hc, url, "GET "+url+" through Traefik at "+addr, 2*time.Minute, want)
}

// testCA is a certificate authority made for one test run.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "operator101 e2e routes CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
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
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue returns the PEM certificate and key of a server certificate for host.
func (ca *testCA) issue(t *testing.T, host string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// setTLSSecret creates, or replaces the data of, the kubernetes.io/tls Secret ns/name with a certificate of ca
// for host, through cl.
func setTLSSecret(t *testing.T, cl client.Client, ns, name string, ca *testCA, host string) {
	t.Helper()
	crt, key := ca.issue(t, host)
	data := map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}
	var s corev1.Secret
	err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s)
	switch {
	case apierrors.IsNotFound(err):
		s = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: corev1.SecretTypeTLS, Data: data}
		err = cl.Create(context.Background(), &s)
	case err == nil:
		s.Data = data
		err = cl.Update(context.Background(), &s)
	}
	if err != nil {
		t.Fatalf("Secret %s/%s: %v", ns, name, err)
	}
}
