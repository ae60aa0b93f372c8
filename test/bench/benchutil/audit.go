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

package benchutil

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// AuditPolicy logs every write at the Metadata level, once, when the response is sent, and nothing else: the
// bench counts writes from the API server's point of view.
const AuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

// AuditEvent is the part of an audit.k8s.io/v1 Event the bench reads.
type AuditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	// RequestReceived is when the API server got the request (microsecond resolution).
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

// Key is "verb resource[/subresource]", e.g. "patch mywebs/status".
func (e *AuditEvent) Key() string {
	if e.ObjectRef == nil {
		return e.Verb + " ?"
	}
	r := e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		r += "/" + e.ObjectRef.Subresource
	}
	return e.Verb + " " + r
}

// Name is the object's name ("" when the log has none).
func (e *AuditEvent) Name() string {
	if e.ObjectRef == nil {
		return ""
	}
	return e.ObjectRef.Name
}

// Code is the HTTP status of the response (0 when missing).
func (e *AuditEvent) Code() int {
	if e.ResponseStatus == nil {
		return 0
	}
	return e.ResponseStatus.Code
}

// ParseAudit reads a JSON-lines audit log and keeps the events of the ResponseComplete stage.
func ParseAudit(r io.Reader) ([]AuditEvent, error) {
	var out []AuditEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var e AuditEvent
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", line, err)
		}
		if e.Stage == "ResponseComplete" {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	return out, nil
}

// Filter selects audit events.
type Filter struct {
	// User is the username that made the request ("" for any).
	User string
	// From and To bound the request's arrival, [From, To); zero means unbounded.
	From, To time.Time
}

func (f Filter) match(e *AuditEvent) bool {
	if f.User != "" && e.User.Username != f.User {
		return false
	}
	if !f.From.IsZero() && e.RequestReceived.Before(f.From) {
		return false
	}
	if !f.To.IsZero() && !e.RequestReceived.Before(f.To) {
		return false
	}
	return true
}

// CountWrites counts the selected events by Key.
func CountWrites(events []AuditEvent, f Filter) map[string]int {
	out := map[string]int{}
	for i := range events {
		if f.match(&events[i]) {
			out[events[i].Key()]++
		}
	}
	return out
}

// Select returns the selected events for which keep is true (keep may be nil).
func Select(events []AuditEvent, f Filter, keep func(*AuditEvent) bool) []AuditEvent {
	var out []AuditEvent
	for i := range events {
		if f.match(&events[i]) && (keep == nil || keep(&events[i])) {
			out = append(out, events[i])
		}
	}
	return out
}

// Total is the sum of the counts.
func Total(counts map[string]int) int {
	t := 0
	for _, c := range counts {
		t += c
	}
	return t
}

// FormatCounts renders counts as "key=count, ..." sorted by key, with each count divided by per (per > 0)
// to two decimals.
func FormatCounts(counts map[string]int, per int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if per > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(counts[k])/float64(per)))
		} else {
			parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
