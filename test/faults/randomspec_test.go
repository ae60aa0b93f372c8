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

package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/testenv"
)

// perKind is how many objects of each kind TestRandomSpecs sends.
const perKind = 150

// seedFromEnv is the seed of the random objects: RANDOMSPEC_SEED, or a fixed one so that every run sends the
// same objects.
func seedFromEnv(t *testing.T, name string, fixed uint64) uint64 {
	t.Helper()
	seed := fixed
	if v := os.Getenv(name); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		seed = s
	}
	t.Logf("seed %d (set %s to change it)", seed, name)
	return seed
}

// crdKind is one of operator101's kinds as the API server serves it, with a valid object to start from and
// the paths (under the object) that random values go to.
type crdKind struct {
	gvk    schema.GroupVersionKind
	plural string
	valid  func(name string) map[string]any
	paths  [][]any // string: a map key; int: a list index
}

var kinds = []crdKind{
	{
		gvk: schema.GroupVersionKind{Group: "operator.k8s-summit.org", Version: "v1", Kind: "MyWeb"}, plural: "mywebs",
		valid: func(name string) map[string]any {
			return map[string]any{"spec": map[string]any{"image": "nginx", "nodePortNumber": 30100 + len(name)%50,
				"pageContentHtml": "<h1>hello</h1>", "replicas": 1}}
		},
		paths: [][]any{{"spec", "image"}, {"spec", "nodePortNumber"}, {"spec", "pageContentHtml"}, {"spec", "replicas"}},
	},
	{
		gvk: schema.GroupVersionKind{Group: "app.example.com", Version: "v1", Kind: "AppService"}, plural: "appservices",
		valid: func(string) map[string]any {
			return map[string]any{"spec": map[string]any{"size": 2, "image": "nginx:1.7.9",
				"envs":      []any{map[string]any{"name": "MODE", "value": "prod"}},
				"resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "128Mi"}},
				"ports":     []any{map[string]any{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}}}}
		},
		paths: [][]any{{"spec", "size"}, {"spec", "image"}, {"spec", "envs"}, {"spec", "envs", 0, "name"},
			{"spec", "envs", 0, "value"}, {"spec", "envs", 0, "valueFrom"}, {"spec", "resources"},
			{"spec", "resources", "limits", "cpu"}, {"spec", "resources", "claims"}, {"spec", "ports"},
			{"spec", "ports", 0, "name"}, {"spec", "ports", 0, "port"}, {"spec", "ports", 0, "targetPort"},
			{"spec", "ports", 0, "nodePort"}, {"spec", "ports", 0, "protocol"}, {"spec", "ports", 1}},
	},
	{
		gvk: schema.GroupVersionKind{Group: "cnat.programming-kubernetes.info", Version: "v1alpha1", Kind: "At"}, plural: "ats",
		valid: func(string) map[string]any {
			return map[string]any{"spec": map[string]any{"schedule": "2099-04-12T10:12:00Z", "command": "echo YAY",
				"ttlSecondsAfterFinished": 60}}
		},
		paths: [][]any{{"spec", "schedule"}, {"spec", "command"}, {"spec", "image"}, {"spec", "ttlSecondsAfterFinished"},
			{"spec", "activeDeadlineSeconds"}},
	},
	{
		gvk: schema.GroupVersionKind{Group: "mygroup.handsomeguy.cn", Version: "v1alpha1", Kind: "DatabaseUser"}, plural: "databaseusers",
		valid: func(name string) map[string]any {
			return map[string]any{"spec": map[string]any{"user": name, "password": map[string]any{"name": "s", "key": "k"},
				"grants":             []any{map[string]any{"database": "shop", "privileges": []any{"SELECT"}}},
				"maxUserConnections": 4, "cleanupPolicy": "Delete"}}
		},
		paths: [][]any{{"spec", "user"}, {"spec", "password"}, {"spec", "password", "name"}, {"spec", "password", "key"},
			{"spec", "host"}, {"spec", "grants"}, {"spec", "grants", 0, "database"}, {"spec", "grants", 0, "privileges"},
			{"spec", "grants", 0, "privileges", 0}, {"spec", "maxUserConnections"}, {"spec", "cleanupPolicy"}},
	},
}

// Paths every kind has.
var commonPaths = [][]any{{"spec"}, {"metadata", "name"}, {"metadata", "labels"}, {"metadata", "annotations"},
	{"metadata", "labels", "target"}, {"metadata", "finalizers"}, {"status"}}

// gen makes random values and objects from one seeded source.
type gen struct{ r *rand.Rand }

// unicodeRunes are characters that tend to break naive code: quotes, control characters, NUL, combining marks,
// right-to-left, emoji, a byte order mark, characters that change length when case-folded.
var unicodeRunes = []rune("aZ09-_. '\"`\\$%{}[]<>;:/\x00\x01\x7f\t\n\r\u00e9\u0130\u0131\u00df\u0301\u200b\u200e\u202e\ufeff\ufffd\u4e2d\u6587\U0001f680\U0001f4a9")

func (g gen) str(n int) string {
	var b strings.Builder
	for range n {
		b.WriteRune(unicodeRunes[g.r.IntN(len(unicodeRunes))])
	}
	return b.String()
}

func (g gen) number() any {
	return []any{-1, 0, 1, 29999, 32768, 65535, 65536, 2147483647, 2147483648, -2147483649, int64(1) << 53,
		int64(-1) << 62, 1.5, -0.0001, 1e300, "1", "0x10", 1e-9}[g.r.IntN(18)]
}

func (g gen) hugeString() string {
	n := []int{300, 4097, 40000, 600000, 1 << 20}[g.r.IntN(5)]
	return strings.Repeat(string(unicodeRunes[g.r.IntN(len(unicodeRunes))]), n)
}

// value is any JSON value, nested up to depth.
func (g gen) value(depth int) any {
	switch n := g.r.IntN(8); {
	case n == 0:
		return nil
	case n == 1:
		return g.r.IntN(2) == 0
	case n == 2:
		return g.number()
	case n == 3 || depth <= 0:
		return g.str(g.r.IntN(40))
	case n < 6:
		l := make([]any, g.r.IntN(4))
		for i := range l {
			l[i] = g.value(depth - 1)
		}
		return l
	default:
		m := map[string]any{}
		for range g.r.IntN(4) {
			m[g.str(1+g.r.IntN(10))] = g.value(depth - 1)
		}
		return m
	}
}

// set puts v at path in obj, creating maps and growing lists on the way.
func set(obj map[string]any, path []any, v any) {
	var cur any = obj
	for i, p := range path {
		last := i == len(path)-1
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return
			}
			if last {
				m[k] = v
				return
			}
			if _, ok := m[k]; !ok {
				if _, isIndex := path[i+1].(int); isIndex {
					m[k] = []any{}
				} else {
					m[k] = map[string]any{}
				}
			}
			cur = m[k]
		case int:
			l, ok := cur.([]any)
			if !ok || k > len(l) {
				return
			}
			if k == len(l) { // grow the list by one, in its parent
				l = append(l, map[string]any{})
				set(obj, path[:i], l)
			}
			if last {
				l[k] = v
				return
			}
			cur = l[k]
		}
	}
}

// del removes path from obj.
func del(obj map[string]any, path []any) {
	var cur any = obj
	for i, p := range path {
		last := i == len(path)-1
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return
			}
			if last {
				delete(m, k)
				return
			}
			cur = m[k]
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				return
			}
			if last {
				set(obj, path[:i], append(l[:k:k], l[k+1:]...))
				return
			}
			cur = l[k]
		}
	}
}

// object returns the body of one request: a valid object of kind k spoiled by 0 to 3 random faults (a tenth
// are left valid), or now and then a body that is not an object of the kind at all. It also says what it did.
func (g gen) object(k crdKind, name string) ([]byte, string) {
	switch g.r.IntN(40) {
	case 0:
		b, _ := json.Marshal(g.value(4))
		return b, "random JSON document"
	case 1:
		b, _ := json.Marshal(g.full(k, name))
		return b[:g.r.IntN(len(b))], "truncated JSON"
	case 2:
		o := g.full(k, name)
		o["kind"] = []string{"Pod", "MyWeb", "At", ""}[g.r.IntN(4)]
		b, _ := json.Marshal(o)
		return b, "wrong kind"
	}
	o := g.full(k, name)
	var did []string
	if g.r.IntN(10) > 0 {
		for range 1 + g.r.IntN(3) {
			// Mostly the kind's own fields; a quarter of the faults go to metadata, spec or status as a whole.
			p := k.paths[g.r.IntN(len(k.paths))]
			if g.r.IntN(4) == 0 {
				p = commonPaths[g.r.IntN(len(commonPaths))]
			}
			switch g.r.IntN(7) {
			case 0:
				set(o, p, g.value(2))
				did = append(did, fmt.Sprintf("random value at %v", p))
			case 1:
				set(o, p, g.number())
				did = append(did, fmt.Sprintf("number at %v", p))
			case 2:
				set(o, p, g.hugeString())
				did = append(did, fmt.Sprintf("huge string at %v", p))
			case 3:
				set(o, append(append([]any{}, p[:len(p)-1]...), g.str(1+g.r.IntN(12))), g.value(2))
				did = append(did, fmt.Sprintf("unknown field next to %v", p))
			case 4:
				del(o, p)
				did = append(did, fmt.Sprintf("no %v", p))
			case 5:
				set(o, p, g.str(g.r.IntN(80)))
				did = append(did, fmt.Sprintf("random unicode at %v", p))
			case 6:
				set(o, p, []any{nil, true, []any{}, map[string]any{}, ""}[g.r.IntN(5)])
				did = append(did, fmt.Sprintf("wrong type at %v", p))
			}
		}
	}
	b, err := json.Marshal(o)
	if err != nil {
		panic(err) // maps of JSON values always encode
	}
	if len(did) == 0 {
		return b, "valid"
	}
	return b, strings.Join(did, "; ")
}

func (g gen) full(k crdKind, name string) map[string]any {
	o := k.valid(name)
	o["apiVersion"] = k.gvk.GroupVersion().String()
	o["kind"] = k.gvk.Kind
	o["metadata"] = map[string]any{"name": name}
	return o
}

// outcome is what the API server answered to one object.
type outcome struct {
	kind, name, what string
	code             int
	status           metav1.Status
	warnings         []string
}

// TestRandomSpecs sends many random and malformed objects of every kind to the real API server, with a
// running manager: each is rejected with a readable message (422 naming the field, 400 for a body that is
// no object of the kind, 413 for one over the request size limit; never a 5xx), or stored and then handled by
// the manager (status with the object's generation and a condition), and no reconcile panics.
func TestRandomSpecs(t *testing.T) {
	ctx := context.Background()
	g := gen{rand.New(rand.NewPCG(seedFromEnv(t, "RANDOMSPEC_SEED", 11), 0))}

	// The manager runs every controller, as cmd/main.go wires them; DatabaseUsers reach a database that is not
	// there (a closed port), which is a condition too.
	opNS, ns := namespace(t, "randomspec-operator"), namespace(t, "randomspec")
	closed := closedPort(t)
	must(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: "target"},
		StringData: map[string]string{"host": "127.0.0.1", "port": strconv.Itoa(closed), "username": "root", "password": "x"}}))
	dt := &mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: "randomspec-default"},
		Spec: mygroupv1alpha1.DatabaseTargetSpec{AdminSecretRef: mygroupv1alpha1.SecretReference{Namespace: opNS, Name: "target"},
			TLS: mygroupv1alpha1.DatabaseTargetTLS{Mode: mygroupv1alpha1.TLSDisabled}, AllowedNamespaces: []string{"*"}}}
	must(t, env.Client.Create(ctx, dt))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), dt) })
	opts := controller.Options{Workers: 2, AtWorkers: 2, OperatorNamespace: opNS, DatabaseDefaultTarget: "randomspec-default"}
	logs := &testenv.SyncBuffer{}
	memory := reconciler.NewMemory()
	env.StartManager(t, nil, func(mgr ctrl.Manager) error { return controller.SetupWithManager(mgr, opts, memory) },
		func(o *ctrl.Options) {
			o.Cache = controller.CacheOptions(opts, memory)
			o.Logger = zap.New(zap.WriteTo(logs), zap.UseDevMode(false))
		})
	panicsBefore := reconcilePanics(t)

	hc, err := rest.HTTPClientFor(env.Config)
	must(t, err)
	var out []outcome
	for i := range perKind {
		for _, k := range kinds {
			name := fmt.Sprintf("r%d-%s", i, strings.ToLower(k.gvk.Kind))
			body, what := g.object(k, name)
			out = append(out, post(t, hc, k, ns, name, body, what))
		}
	}

	// Rejections must be readable; stored objects are waited for below.
	counts := map[string]int{}
	var stored []outcome
	for _, o := range out {
		code := strconv.Itoa(o.code)
		if counts[code] == 0 && o.code != http.StatusCreated {
			t.Logf("first %d: %s %s (%s): %.300s", o.code, o.kind, o.name, o.what, o.status.Message)
		}
		counts[code]++
		if o.what == "valid" && o.code != http.StatusCreated {
			t.Errorf("%s %s: a valid object was refused: %d %s", o.kind, o.name, o.code, o.status.Message)
		}
		switch o.code {
		case http.StatusCreated:
			stored = append(stored, o)
		case http.StatusUnprocessableEntity:
			if len(o.status.Details.Causes) == 0 || o.status.Message == "" {
				t.Errorf("%s %s (%s): 422 without causes: %+v", o.kind, o.name, o.what, o.status)
			}
			for _, c := range o.status.Details.Causes {
				if c.Field == "" && !strings.Contains(c.Message, "metadata.name") {
					t.Errorf("%s %s (%s): a cause names no field: %+v", o.kind, o.name, o.what, c)
				}
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if o.status.Message == "" {
				t.Errorf("%s %s (%s): %d without a message", o.kind, o.name, o.what, o.code)
			}
		default:
			t.Errorf("%s %s (%s): status %d: %+v", o.kind, o.name, o.what, o.code, o.status)
		}
	}

	// Every stored object is handled: its status describes its generation and has a condition.
	deadline := time.Now().Add(3 * time.Minute)
	handled := 0
	for _, o := range stored {
		var k crdKind
		for _, c := range kinds {
			if c.gvk.Kind == o.kind {
				k = c
			}
		}
		for {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(k.gvk)
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.name}, u)
			gen, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			if err == nil && gen == u.GetGeneration() && len(conds) > 0 {
				handled++
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s %s (%s) was stored but not handled: %v, status %v", o.kind, o.name, o.what, err, u.Object["status"])
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if t.Failed() {
		t.Logf("manager log:\n%s", logs.String())
	}
	panics := reconcilePanics(t) - panicsBefore
	if panics != 0 || strings.Contains(logs.String(), "Observed a panic") {
		t.Errorf("%v reconcile panics (recovered by controller-runtime)", panics)
	}
	keys := make([]string, 0, len(counts))
	for c := range counts {
		keys = append(keys, c)
	}
	sort.Strings(keys)
	var byCode []string
	for _, c := range keys {
		byCode = append(byCode, fmt.Sprintf("%s: %d", c, counts[c]))
	}
	t.Logf("sent %d objects (%d per kind): rejected %d, stored %d, handled %d, reconcile panics %v; by status code: %s",
		len(out), perKind, len(out)-len(stored), len(stored), handled, panics, strings.Join(byCode, ", "))
}

// post sends body as a new object of kind k and returns the answer.
func post(t *testing.T, hc *http.Client, k crdKind, ns, name string, body []byte, what string) outcome {
	t.Helper()
	url := fmt.Sprintf("%s/apis/%s/%s/namespaces/%s/%s", strings.TrimRight(env.Config.Host, "/"), k.gvk.Group, k.gvk.Version, ns, k.plural)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	must(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", k.gvk.Kind, name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	must(t, err)
	o := outcome{kind: k.gvk.Kind, name: name, what: what, code: resp.StatusCode, warnings: resp.Header.Values("Warning")}
	if resp.StatusCode != http.StatusCreated {
		if err := json.Unmarshal(raw, &o.status); err != nil {
			t.Errorf("%s %s (%s): status %d with a body that is no Status: %q", k.gvk.Kind, name, what, resp.StatusCode, raw)
		}
		if o.status.Details == nil {
			o.status.Details = &metav1.StatusDetails{}
		}
	} else {
		var created metav1.PartialObjectMetadata
		must(t, json.Unmarshal(raw, &created))
		o.name = created.Name // the name the object was stored under
	}
	return o
}

// reconcilePanics is the number of reconcile panics controller-runtime recovered in this process, over
// every controller (RecoverPanic is on by default; nothing turns it off).
func reconcilePanics(t *testing.T) float64 {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	must(t, err)
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == "controller_runtime_reconcile_panics_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

func namespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	must(t, env.Client.Create(context.Background(), ns))
	return ns.Name
}

// closedPort is a local TCP port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	must(t, l.Close())
	return port
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestWrongTypeWithAFormatIsRejected: an At whose schedule is not a string (a list, an object, a number, a
// boolean) is refused with 422 naming spec.schedule; stored, one such At would break the At informer's list
// for every At (found by TestRandomSpecs). The API server does not check the type of a field that has a
// format (kube-openapi skips it for strings and lists), and At's schedule has none: it is a plain string
// with a pattern, whose calendar date a CEL rule checks (api/cnat/v1alpha1/at_types.go), so the API server
// checks its type as any string's.
func TestWrongTypeWithAFormatIsRejected(t *testing.T) {
	hc, err := rest.HTTPClientFor(env.Config)
	must(t, err)
	ns := namespace(t, "wrongtype")
	for i, schedule := range []string{`[]`, `["2099-04-12T10:12:00Z"]`, `{"a":1}`, `7`, `true`} {
		name := fmt.Sprintf("at-%d", i)
		body := fmt.Sprintf(`{"apiVersion":"cnat.programming-kubernetes.info/v1alpha1","kind":"At","metadata":{"name":%q},`+
			`"spec":{"command":"echo","schedule":%s}}`, name, schedule)
		o := post(t, hc, kinds[2], ns, name, []byte(body), schedule)
		if o.code != http.StatusUnprocessableEntity || !strings.Contains(o.status.Message, "spec.schedule") {
			t.Errorf("schedule %s: %d %q, want 422 naming spec.schedule", schedule, o.code, o.status.Message)
		}
	}
}

// TestHugeSecretReferenceIsRejected: a DatabaseUser whose password Secret name was 40,000 characters long was
// stored, and its condition message ("Secret ... not found") then exceeded the 32 KiB a condition message may
// have, so no status could ever be written (found by TestRandomSpecs). The schema bounds name and key.
func TestHugeSecretReferenceIsRejected(t *testing.T) {
	hc, err := rest.HTTPClientFor(env.Config)
	must(t, err)
	ns := namespace(t, "hugeref")
	huge := strings.Repeat("s", 40000)
	for i, ref := range []string{`{"name":"` + huge + `","key":"k"}`, `{"name":"s","key":"` + huge + `"}`} {
		name := fmt.Sprintf("dbu-%d", i)
		body := fmt.Sprintf(`{"apiVersion":"mygroup.handsomeguy.cn/v1alpha1","kind":"DatabaseUser","metadata":{"name":%q},`+
			`"spec":{"user":"u","password":%s}}`, name, ref)
		o := post(t, hc, kinds[3], ns, name, []byte(body), "huge reference")
		if o.code != http.StatusUnprocessableEntity || !strings.Contains(o.status.Message, "spec.password") {
			t.Errorf("reference %.40s...: %d %.200q, want 422 naming spec.password", ref, o.code, o.status.Message)
		}
	}
}
