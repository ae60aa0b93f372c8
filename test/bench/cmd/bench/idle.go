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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/operator101/operator101/test/bench/benchutil"
)

// auditTail reads an audit log as it grows and remembers when a user last wrote.
type auditTail struct {
	path    string
	user    string
	offset  int64
	partial []byte
	last    time.Time
}

// poll reads what was appended since the last call.
func (t *auditTail) poll() error {
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	t.offset += int64(len(b))
	b = append(t.partial, b...)
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		t.partial = b
		return nil
	}
	t.partial = append([]byte(nil), b[end+1:]...)
	for _, line := range bytes.Split(b[:end], []byte("\n")) {
		var e benchutil.AuditEvent
		if len(line) == 0 || json.Unmarshal(line, &e) != nil || e.User.Username != t.user {
			continue
		}
		if e.RequestReceived.After(t.last) {
			t.last = e.RequestReceived
		}
	}
	return nil
}

// waitIdle waits until the user has written nothing for idle (counting from `from` at the earliest) and
// returns when its last write arrived.
func (t *auditTail) waitIdle(ctx context.Context, from time.Time, idle, timeout time.Duration) (time.Time, error) {
	if t.last.Before(from) {
		t.last = from
	}
	deadline := time.Now().Add(timeout)
	for {
		if err := t.poll(); err != nil {
			return t.last, err
		}
		if time.Since(t.last) >= idle {
			return t.last, nil
		}
		if time.Now().After(deadline) {
			return t.last, fmt.Errorf("%s still writing after %v", t.user, timeout)
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return t.last, err
		}
	}
}
