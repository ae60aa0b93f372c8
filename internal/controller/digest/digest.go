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

// Package digest takes keyed digests of API objects and apply configurations: HMAC-SHA256 (128 bits of it)
// under a key that a Keyed draws when it is made, so a digest means something only to the Keyed that took it.
// The manager's cache keeps digests instead of the fields they stand for (internal/controller/apply); whoever
// may edit an object can write an annotation, but not a value that matches a digest. Memo remembers digests by
// UID.
package digest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// Keyed takes digests under one key, drawn by New. A manager has one: the cache transforms and the reconcilers
// compare each other's digests.
type Keyed struct {
	key []byte
	// buffers keeps the byte slices keys are built in, for reuse.
	buffers sync.Pool
	// macs keeps HMAC-SHA256 states under key for reuse: a new one costs the key's two SHA-256 blocks and four
	// allocations.
	macs sync.Pool
}

// New returns a Keyed with a key of its own. Anyone who may edit a child can give it an annotation of a digest's
// name; without the key, no value they write matches a digest, so such an object still counts as drifted.
func New() *Keyed {
	k := &Keyed{key: make([]byte, 32)}
	_, _ = rand.Read(k.key) // crypto/rand's Read never returns an error
	k.buffers.New = func() any { b := make([]byte, 0, 1024); return &b }
	k.macs.New = func() any { return hmac.New(sha256.New, k.key) }
	return k
}

// Of is a digest of the fields and values of an apply configuration (or any API object): two have the same
// digest exactly when equality.Semantic finds them equal, with the metadata the server assigns left out
// (controller-runtime writes the server's answer back into an applied configuration, and Extract never returns
// it). So quantities count by value ("0.5" is "500m"), and an empty map or list is the same as none.
//
// An apply configuration (what the builders return and Extract gives back) is encoded as it is, its type's
// fields in their order, map keys sorted, empty ones left out (every field is omitempty), quantities in their
// canonical form, and the metadata the server assigns taken out first: about a tenth of the CPU and memory of
// the general path, which converts to an unstructured map first. Its digest is of a different encoding than
// that of the same content as an unstructured object, so only digests of one kind of value compare: the
// reconcilers and the cache transforms compare apply configurations of one type with each other.
func (k *Keyed) Of(v any) (string, error) {
	var b []byte
	var err error
	if ac, ok := v.(runtime.ApplyConfiguration); ok && !IsNil(ac) {
		b, err = json.Marshal(WithMetadata(ac, nil))
	} else {
		var m map[string]any
		if m, err = toMap(v); err != nil {
			return "", err
		}
		b, err = json.Marshal(canonical(m)) // encoding/json writes map keys sorted
	}
	if err != nil {
		return "", fmt.Errorf("encoding %T for its digest: %w", v, err)
	}
	return k.Sum(b), nil
}

// Sum is the HMAC-SHA256 under k's key of b, its first 128 bits (sumBytes) in base64: 22 characters.
func (k *Keyed) Sum(b []byte) string {
	m := k.macs.Get().(hash.Hash)
	defer k.macs.Put(m)
	m.Reset()
	m.Write(b)
	var out [sha256.Size]byte
	return base64.RawStdEncoding.EncodeToString(m.Sum(out[:0])[:sumBytes])
}

// sumBytes is how much of an HMAC-SHA256 Sum keeps: 128 bits, half of it, as RFC 2104 allows (a forger still
// has one chance in 2^128 per guess). The cache keeps several digests per object and the Memory two more; a
// string of 22 characters takes 24 bytes of heap where one of 43 took 48 (docs/contributing/performance.md).
const sumBytes = 16

// MAC is the Sum of parts, each length-prefixed.
func (k *Keyed) MAC(parts ...string) string {
	bp := k.Buffer()
	defer k.PutBuffer(bp)
	b := (*bp)[:0]
	for _, p := range parts {
		b = AppendPart(b, p)
	}
	*bp = b
	return k.Sum(b)
}

// Buffer is a byte slice to build a key in; give it back with PutBuffer, holding what was built (so that its
// capacity is kept).
func (k *Keyed) Buffer() *[]byte { return k.buffers.Get().(*[]byte) }

// PutBuffer gives back a slice Buffer gave.
func (k *Keyed) PutBuffer(b *[]byte) { k.buffers.Put(b) }

// AppendPart appends s, prefixed with its length, so that no two lists of parts append the same bytes.
func AppendPart[S ~string | ~[]byte](b []byte, s S) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	return append(append(b, ':'), s...)
}

// AppendCount appends n and a separator.
func AppendCount(b []byte, n int) []byte { return append(strconv.AppendInt(b, int64(n), 10), ';') }

// AppendBool appends one byte for nil, true and false.
func AppendBool(b []byte, v *bool) []byte {
	switch {
	case v == nil:
		return append(b, 'n')
	case *v:
		return append(b, 't')
	}
	return append(b, 'f')
}

// AppendMetadata appends o's labels and annotations, each map in the order of its keys.
func AppendMetadata(b []byte, o metav1.Object) []byte {
	for _, m := range []map[string]string{o.GetLabels(), o.GetAnnotations()} {
		b = AppendCount(b, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			b = AppendPart(AppendPart(b, k), m[k])
		}
	}
	return b
}

// WithMetadata is ac, or a shallow copy of it whose metadata has none of the fields the server assigns
// and resourceVersion as its resourceVersion (none when nil), when ac's differs.
func WithMetadata(ac runtime.ApplyConfiguration, resourceVersion *string) any {
	v := reflect.ValueOf(ac)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return ac
	}
	f := v.Elem().FieldByName("ObjectMetaApplyConfiguration")
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return ac
	}
	var meta metav1ac.ObjectMetaApplyConfiguration
	if !f.IsNil() {
		m, ok := f.Interface().(*metav1ac.ObjectMetaApplyConfiguration)
		if !ok {
			return ac
		}
		if m.UID == nil && m.Generation == nil && m.CreationTimestamp == nil &&
			((m.ResourceVersion == nil && resourceVersion == nil) ||
				(m.ResourceVersion != nil && resourceVersion != nil && *m.ResourceVersion == *resourceVersion)) {
			return ac
		}
		meta = *m
	}
	meta.UID, meta.Generation, meta.CreationTimestamp, meta.ResourceVersion = nil, nil, nil, resourceVersion
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	cp.Elem().FieldByName("ObjectMetaApplyConfiguration").Set(reflect.ValueOf(&meta))
	return cp.Interface()
}

// canonical gives nil and empty maps and lists one spelling, as equality.Semantic does.
func canonical(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = canonical(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = canonical(e)
		}
		return out
	}
	return v
}

func toMap(v any) (map[string]any, error) {
	if IsNil(v) {
		return nil, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		return nil, fmt.Errorf("converting %T for comparison: %w", v, err)
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		// The metadata the server assigns.
		for _, k := range [...]string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
			delete(md, k)
		}
	}
	return m, nil
}

// IsNil tells whether v is nil or a nil pointer, map, slice or interface.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// Memo remembers, by UID, one digest under a key of everything else it depends on: a lookup under another key
// finds nothing. Safe for concurrent use.
type Memo struct {
	mu sync.Mutex
	m  map[types.UID]memoEntry
}

type memoEntry struct{ key, digest string }

// NewMemo returns an empty Memo.
func NewMemo() *Memo { return &Memo{m: map[types.UID]memoEntry{}} }

// Get is the value remembered for uid under key; none for the key "".
func (m *Memo) Get(uid types.UID, key string) (string, bool) {
	if key == "" {
		return "", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[uid]
	return e.digest, ok && e.key == key
}

// Put remembers digest for uid under key; nothing for the key "".
func (m *Memo) Put(uid types.UID, key, digest string) {
	if key == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[uid] = memoEntry{key: key, digest: digest}
}

// Forget drops what is remembered for uid.
func (m *Memo) Forget(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, uid)
}

// Has tells whether anything is remembered for uid.
func (m *Memo) Has(uid types.UID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.m[uid]
	return ok
}
