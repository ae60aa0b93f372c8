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

// Command probe checks, from inside a pod, what busybox cannot: cluster DNS lookups with Go's resolver, TLS to
// the API server through the kubernetes Service with the pod's ServiceAccount token, HTTP GETs, and a MySQL
// login with a DatabaseUser's connection Secret.
//
//	probe api              GET /api on https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT with the token
//	probe dns NAME...      resolve each NAME (through the pod's resolv.conf, i.e. the cluster DNS)
//	probe http URL...      GET each URL, expect a 2xx answer
//	probe mysql DIR        log in with the DatabaseUser connection Secret mounted in DIR (uri, ca.crt), over TLS
//	                       that verifies the server, and write a row to its database
//
// It prints one line per check and exits non-zero on the first failure.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe api | dns NAME... | http URL... | mysql DIR")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	switch os.Args[1] {
	case "api":
		err = api(ctx)
	case "dns":
		err = each(os.Args[2:], func(name string) error { return lookup(ctx, name) })
	case "http":
		err = each(os.Args[2:], func(url string) error { return get(ctx, http.DefaultClient, url, "") })
	case "mysql":
		err = each(os.Args[2:], func(dir string) error { return mysqlWrite(ctx, dir) })
	default:
		err = fmt.Errorf("unknown check %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}

func each(args []string, check func(string) error) error {
	if len(args) == 0 {
		return fmt.Errorf("nothing to check")
	}
	for _, a := range args {
		if err := check(a); err != nil {
			return err
		}
	}
	return nil
}

func lookup(ctx context.Context, name string) error {
	addrs, err := net.DefaultResolver.LookupHost(ctx, name)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", name, err)
	}
	fmt.Printf("dns %s -> %s\n", name, strings.Join(addrs, ","))
	return nil
}

func api(ctx context.Context) error {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return fmt.Errorf("KUBERNETES_SERVICE_HOST/PORT not set: not in a pod?")
	}
	token, err := os.ReadFile(saDir + "/token")
	if err != nil {
		return fmt.Errorf("read the ServiceAccount token: %w", err)
	}
	caPEM, err := os.ReadFile(saDir + "/ca.crt")
	if err != nil {
		return fmt.Errorf("read the cluster CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("no certificate in %s/ca.crt", saDir)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return get(ctx, client, "https://"+net.JoinHostPort(host, port)+"/api", strings.TrimSpace(string(token)))
}

func get(ctx context.Context, client *http.Client, url, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("request %s: %w", url, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	fmt.Printf("http GET %s -> %s (%d bytes shown) %s\n", url, resp.Status, len(body), strings.Join(strings.Fields(string(body)), " "))
	return nil
}
