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

package apply

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// etcdGets is how many reads of ConfigMaps kube-apiserver has sent to etcd (its etcd_request_duration_seconds
// histogram).
func etcdGets(t *testing.T) float64 {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rc.Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "etcd_request_duration_seconds_count{") && strings.Contains(line, `operation="get"`) &&
			strings.Contains(line, `resource="configmaps"`) {
			v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			n += v
		}
	}
	return n
}

// TestReadWholeFromTheWatchCache: ReadWhole reads a version not older than the cache's from the API server's
// watch cache (no read reaches etcd), reports an object that is gone as not found once the watch cache has seen
// it go, and reads past the watch
// cache when the API server says that its cache is behind.
func TestReadWholeFromTheWatchCache(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "apply-readwhole")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x"}, Data: map[string]string{"page": "whole"}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	cached := cm.DeepCopy() // what a trimmed cache holds: the identity and the version
	cached.Data = nil

	before := etcdGets(t)
	whole := &corev1.ConfigMap{}
	if found, err := ReadWhole(ctx, env.Client, cached, whole); err != nil || !found || whole.Data["page"] != "whole" {
		t.Fatalf("ReadWhole: found %v, %v, %v; want the object whole", found, err, whole.Data)
	}
	if got := etcdGets(t) - before; got != 0 {
		t.Errorf("ReadWhole sent %v reads to etcd; want 0 (answered from the watch cache)", got)
	}
	// The metric counts: a quorum read reaches etcd.
	before = etcdGets(t)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	if got := etcdGets(t) - before; got != 1 {
		t.Errorf("a quorum read sent %v reads to etcd; want 1 (the metric does not count what it should)", got)
	}

	// An API server whose watch cache is behind the version asked for answers as kube-apiserver does (a timeout
	// with the cause ResourceVersionTooLarge): ReadWhole reads again, past the watch cache.
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	var plain int
	behind := interceptor.NewClient(base, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch,
		key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if len(opts) > 0 {
			err := apierrors.NewTimeoutError("Too large resource version", 1)
			err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}
			return err
		}
		plain++
		return c.Get(ctx, key, obj)
	}})
	whole = &corev1.ConfigMap{}
	if found, err := ReadWhole(ctx, behind, cached, whole); err != nil || !found || whole.Data["page"] != "whole" || plain != 1 {
		t.Errorf("cache behind: found %v, %v, %v, %d plain reads; want the object whole from one read past the cache",
			found, err, whole.Data, plain)
	}

	if err := env.Client.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	// The watch cache answers "not older than the cache's version", so it may still hold the object for a moment
	// after the delete; once it has seen the delete, ReadWhole reports not found, and never an error.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		found, err := ReadWhole(ctx, env.Client, cached, &corev1.ConfigMap{})
		return !found, err
	})
	if err != nil {
		t.Errorf("after the delete: %v; want not found and no error", err)
	}
}
