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

// Command operator101-scorecard runs operator101's custom scorecard tests. `operator-sdk scorecard` runs each in
// a pod (image built by `hack/images.sh scorecard`), with the bundle untarred at /bundle and the namespace in
// SCORECARD_NAMESPACE; it prints one v1alpha3 TestStatus as JSON on stdout, which scorecard reads from the
// pod's log.
//
//	operator101-scorecard alm-examples-ready [--bundle /bundle] [--namespace NS] [--timeout 2m]
//	operator101-scorecard spec-descriptors [--bundle /bundle]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	scapiv1alpha3 "github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/test/scorecard/almready"
	"github.com/operator101/operator101/test/scorecard/descriptors"
)

func main() {
	fs := flag.NewFlagSet("operator101-scorecard", flag.ExitOnError)
	bundle := fs.String("bundle", "/bundle", "the bundle directory (scorecard untars it at /bundle)")
	ns := fs.String("namespace", os.Getenv("SCORECARD_NAMESPACE"), "namespace to create the examples in")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long every example together may take to be ready")
	usage := fmt.Errorf("usage: operator101-scorecard %s|%s [flags]", almready.TestName, descriptors.TestName)
	if len(os.Args) < 2 {
		fail(usage)
	}
	test := os.Args[1]
	_ = fs.Parse(os.Args[2:])
	var status scapiv1alpha3.TestStatus
	switch test {
	case almready.TestName:
		if *ns == "" {
			*ns = "default"
		}
		status = run(*bundle, *ns, *timeout)
	case descriptors.TestName:
		status = descriptors.Run(*bundle)
	default:
		fail(fmt.Errorf("unknown test %q: %w", test, usage))
	}
	out, _ := json.MarshalIndent(status, "", "    ")
	fmt.Println(string(out))
}

func run(bundle, ns string, timeout time.Duration) scapiv1alpha3.TestStatus {
	examples, err := almready.Examples(bundle)
	if err != nil {
		return almready.Status(nil, err)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return almready.Status(nil, fmt.Errorf("reaching the API server: %w", err))
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return almready.Status(nil, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	return almready.Status(almready.Run(ctx, c, ns, examples, timeout), nil)
}

func fail(err error) {
	out, _ := json.MarshalIndent(almready.Status(nil, err), "", "    ")
	fmt.Println(string(out))
	os.Exit(1)
}
