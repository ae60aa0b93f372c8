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

// Package eventrecorder sends the controllers' Events (events.k8s.io/v1), made as client-go's recorder makes
// them, in the background. Its own code because client-go's broadcaster, which controller-runtime's recorder
// uses, keeps a copy of every Event it sent for 6 to 12 minutes to count repeats of it as a series: about 1 KiB
// per Event, 20 MiB while 10000 MyWebs and AppServices converge (docs/contributing/performance.md). operator101
// records an Event only on a transition, so there is no repeat to count, and an Event sent is forgotten.
package eventrecorder

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

const (
	// queueLength is how many Events wait to be sent at most; more are dropped, and logged, as client-go's
	// broadcaster drops them past its queue of 1000.
	queueLength = 1000
	// senders is how many Events are sent at once.
	senders = 4
	// maxTries is how many times an Event the API server did not refuse is sent (client-go's count).
	maxTries = 12
)

// Sender sends the Events of the recorders it made (Recorder) while it runs (Start): one per manager.
type Sender struct {
	events    eventsv1client.EventsGetter
	clientErr error // why events could not be made; Start returns it
	scheme    *runtime.Scheme
	host      string
	log       logr.Logger
	queue     chan *eventsv1.Event
	// retry is the time between two tries of an Event (jittered by a quarter).
	retry time.Duration

	dropped atomic.Int64
}

// New returns a Sender of Events through cfg and httpClient; scheme names the kinds of the objects Events are
// about. A cfg the client cannot be made of is Start's error.
func New(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme, log logr.Logger) *Sender {
	s := &Sender{scheme: scheme, log: log, queue: make(chan *eventsv1.Event, queueLength), retry: 10 * time.Second}
	s.events, s.clientErr = eventsv1client.NewForConfigAndClient(cfg, httpClient)
	if s.clientErr != nil {
		s.clientErr = fmt.Errorf("making the Events client: %w", s.clientErr)
	}
	s.host, _ = os.Hostname() // as client-go's recorder: without it, the reportingInstance is the controller's name
	return s
}

// Recorder returns the recorder of the controller named controller: its Events' reportingController, and,
// with the host name, their reportingInstance (as client-go's).
func (s *Sender) Recorder(controller string) recorder.EventRecorder {
	return &eventRecorder{s: s, controller: controller, instance: controller + "-" + s.host}
}

// NeedLeaderElection is false: a manager that is not the leader sends the few Events it records too.
func (s *Sender) NeedLeaderElection() bool { return false }

// Start sends the Events recorded until ctx is done; those still queued then are not sent.
func (s *Sender) Start(ctx context.Context) error {
	if s.clientErr != nil {
		return s.clientErr
	}
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case e := <-s.queue:
					s.send(ctx, e)
				}
			}
		})
	}
	wg.Wait()
	return nil
}

// send creates e, trying again after s.retry while the API server cannot be reached, as client-go does; an
// Event the API server refuses is logged (without its note) and dropped.
func (s *Sender) send(ctx context.Context, e *eventsv1.Event) {
	for try := 1; ; try++ {
		_, err := s.events.Events(e.Namespace).Create(ctx, e, metav1.CreateOptions{})
		var status apierrors.APIStatus
		var construction *rest.RequestConstructionError
		switch {
		case err == nil:
			return
		case errors.As(err, &status) || errors.As(err, &construction):
			if !apierrors.IsAlreadyExists(err) {
				s.log.Error(err, "Event refused", "regarding", e.Regarding.Namespace+"/"+e.Regarding.Name, "reason", e.Reason)
			}
			return
		case try >= maxTries:
			s.log.Error(err, "Event not sent, retry limit reached", "regarding", e.Regarding.Namespace+"/"+e.Regarding.Name, "reason", e.Reason)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait.Jitter(s.retry, 0.25)):
		}
	}
}

// enqueue queues e without waiting: an Event is never worth holding a reconcile for.
func (s *Sender) enqueue(e *eventsv1.Event) {
	select {
	case s.queue <- e:
	default:
		s.log.Info("Event dropped: too many waiting to be sent", "regarding", e.Regarding.Namespace+"/"+e.Regarding.Name, "reason", e.Reason, "droppedSoFar", s.dropped.Add(1))
	}
}

type eventRecorder struct {
	s                    *Sender
	controller, instance string
}

func (r *eventRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.AnnotatedEventf(regarding, related, nil, eventtype, reason, action, note, args...)
}

// AnnotatedEventf queues the Event client-go's recorder would make of the same arguments.
func (r *eventRecorder) AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string, args ...any) {
	now := time.Now()
	ref, err := reference.GetReference(r.s.scheme, regarding)
	if err != nil {
		r.s.log.Error(err, "no Event: the object it is about has no reference", "reason", reason)
		return
	}
	if !util.ValidateEventType(eventtype) {
		r.s.log.Error(nil, "no Event: unsupported type", "type", eventtype, "reason", reason)
		return
	}
	var refRelated *corev1.ObjectReference
	if related != nil {
		refRelated, _ = reference.GetReference(r.s.scheme, related) // as client-go: an Event without it
	}
	namespace := ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	r.s.enqueue(&eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: util.GenerateEventName(ref.Name, now.UnixNano()), Namespace: namespace,
			Annotations: annotations},
		EventTime:           metav1.MicroTime{Time: now},
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Related:             refRelated,
		Note:                fmt.Sprintf(note, args...),
		Type:                eventtype,
	})
}
