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

package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/operator101/operator101/api"
)

// Watched is every kind the controllers watch: operator101's own (every object kind of package api's scheme)
// and the kinds of child the manager's cache, c (CacheOptions), holds for them.
func Watched(c cache.Options) ([]client.Object, error) {
	scheme := runtime.NewScheme()
	if err := api.AddToScheme(scheme); err != nil {
		return nil, err
	}
	var out []client.Object
	seen := map[reflect.Type]bool{}
	for _, t := range scheme.AllKnownTypes() {
		obj, ok := reflect.New(t).Interface().(client.Object)
		if ok && !meta.IsListType(obj) {
			out = append(out, obj)
			seen[reflect.TypeOf(obj)] = true
		}
	}
	for obj := range c.ByObject {
		if !seen[reflect.TypeOf(obj)] { // the cache may shape operator101's own kinds too
			out = append(out, obj)
		}
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprintf("%T", out[i]) < fmt.Sprintf("%T", out[j]) })
	return out, nil
}

// readyWithin bounds how long one readiness check waits for the cache: the kubelet's probe waits one second.
const readyWithin = 200 * time.Millisecond

// Readiness is the manager's readiness check: ready once its cache has started and synced what it holds, and,
// on the leader, once every kind in watched has synced in it, so that ready means the controllers act on a full
// view. A replica that does not lead is ready with its cache synced: it stands by, and a rollout waits for it.
func Readiness(mgr ctrl.Manager, watched []client.Object) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), readyWithin)
		defer cancel()
		c := mgr.GetCache()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("the cache has not started or synced")
		}
		select {
		case <-mgr.Elected():
		default:
			return nil
		}
		for _, obj := range watched {
			inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
			if err != nil {
				return fmt.Errorf("watching %T: %w", obj, err)
			}
			if !inf.HasSynced() {
				return fmt.Errorf("%T not synced yet", obj)
			}
		}
		return nil
	}
}
