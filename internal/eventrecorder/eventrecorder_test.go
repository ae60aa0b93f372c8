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

package eventrecorder

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

// start runs a Sender through cfg, which tries an Event again after retry, until the test ends.
func start(t *testing.T, cfg *rest.Config, log logr.Logger, retry time.Duration) *Sender {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, hc, env.Scheme, log)
	s.retry = retry
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return s
}

func configMap(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: env.NewNamespace(t, "events"), Name: "web"}}
	testenv.Create(t, env.Client, cm)
	return cm
}

func eventsIn(g gomega.Gomega, ns string) []eventsv1.Event {
	var l eventsv1.EventList
	g.Expect(env.Client.List(context.Background(), &l, client.InNamespace(ns))).To(gomega.Succeed())
	return l.Items
}

// The Event sent is the one client-go's recorder sends for the same arguments, but for its name and time.
func TestEventIsTheOneClientGoSends(t *testing.T) {
	cm := configMap(t)
	ours := start(t, env.Config, logr.Discard(), time.Second).Recorder("operator101-test")
	cs := kubernetes.NewForConfigOrDie(env.Config)
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	b.StartRecordingToSink(t.Context().Done())
	t.Cleanup(b.Shutdown)
	theirs := b.NewRecorder(env.Scheme, "operator101-test")

	ours.Eventf(cm, nil, corev1.EventTypeWarning, "ChildNotOwned", "Apply", "the %s %q is not ours", "Service", "web")
	theirs.Eventf(cm, nil, corev1.EventTypeWarning, "ChildNotOwned", "Apply", "the %s %q is not ours", "Service", "web")

	var got []eventsv1.Event
	testenv.Eventually(t, 30*time.Second, func(g gomega.Gomega) {
		got = eventsIn(g, cm.Namespace)
		g.Expect(got).To(gomega.HaveLen(2))
	})
	for i := range got {
		e := &got[i]
		if !strings.HasPrefix(e.Name, cm.Name+".") || e.EventTime.IsZero() {
			t.Errorf("Event %s at %v: want a name of %s's and a time", e.Name, e.EventTime, cm.Name)
		}
		e.ObjectMeta, e.EventTime = metav1.ObjectMeta{}, metav1.MicroTime{}
	}
	if got[0].Note != `the Service "web" is not ours` || got[0].Regarding.UID != cm.UID || got[0].Regarding.Kind != "ConfigMap" {
		t.Errorf("Event %+v", got[0])
	}
	if !equalEvents(got[0], got[1]) {
		t.Errorf("ours and client-go's differ:\n%+v\n%+v", got[0], got[1])
	}
}

func equalEvents(a, b eventsv1.Event) bool {
	return a.Note == b.Note && a.Reason == b.Reason && a.Type == b.Type && a.Action == b.Action &&
		a.ReportingController == b.ReportingController && a.ReportingInstance == b.ReportingInstance &&
		a.Regarding == b.Regarding && a.Related == nil && b.Related == nil && a.Series == nil && b.Series == nil
}

// An Event the API server refuses is logged without its note, which may say what the object holds, and not
// sent again.
func TestARefusedEventIsLoggedWithoutItsNote(t *testing.T) {
	cm := configMap(t)
	var mu sync.Mutex
	var logged []string
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, args)
	}, funcr.Options{})
	var posts atomic.Int32
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counting(&posts, 0))
	rec := start(t, cfg, log, time.Second).Recorder("operator101-test")

	rec.Eventf(cm, nil, corev1.EventTypeNormal, "Available", "Reconcile", "%s", "hunter2"+strings.Repeat("x", 2000)) // longer than 1 KiB: refused
	testenv.Eventually(t, 30*time.Second, func(g gomega.Gomega) {
		mu.Lock()
		defer mu.Unlock()
		g.Expect(strings.Join(logged, "\n")).To(gomega.ContainSubstring("Event refused"))
	})
	mu.Lock()
	defer mu.Unlock()
	if all := strings.Join(logged, "\n"); strings.Contains(all, "hunter2") {
		t.Errorf("the log holds the note: %s", all)
	}
	if n := posts.Load(); n != 1 {
		t.Errorf("%d POSTs of a refused Event, want 1", n)
	}
}

// An Event that cannot reach the API server is sent again until it does.
func TestAnEventIsSentAgainUntilTheServerIsReached(t *testing.T) {
	cm := configMap(t)
	var posts atomic.Int32
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counting(&posts, 2))
	s := start(t, cfg, logr.Discard(), 10*time.Millisecond)
	s.Recorder("operator101-test").Eventf(cm, nil, corev1.EventTypeNormal, "Available", "Reconcile", "up")
	testenv.Eventually(t, 30*time.Second, func(g gomega.Gomega) {
		g.Expect(eventsIn(g, cm.Namespace)).To(gomega.HaveLen(1))
	})
	if n := posts.Load(); n != 3 {
		t.Errorf("%d POSTs, want 3 (two that failed)", n)
	}
}

// counting counts the POSTs through it and fails the first failures of them before they are sent.
func counting(posts *atomic.Int32, failures int32) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodPost {
				return rt.RoundTrip(r)
			}
			if posts.Add(1) <= failures {
				return nil, errors.New("connection refused (the test's)")
			}
			return rt.RoundTrip(r)
		})
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
