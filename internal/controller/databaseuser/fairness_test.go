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

package databaseuser_test

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// dripServer accepts connections and sends each a byte every 100 ms: a server that never finishes its
// handshake, and never lets a read time out. It counts the connections open at once.
type dripServer struct {
	ln            net.Listener
	mu            sync.Mutex
	open, maxOpen int
}

func startDripServer(t *testing.T) *dripServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &dripServer{ln: ln}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go d.drip(c)
		}
	}()
	return d
}

func (d *dripServer) drip(c net.Conn) {
	defer func() { _ = c.Close() }()
	d.mu.Lock()
	d.open++
	d.maxOpen = max(d.maxOpen, d.open)
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.open--
		d.mu.Unlock()
	}()
	// A packet header announcing a 1000-byte handshake, then its bytes one at a time: 100 s to the end.
	if _, err := c.Write([]byte{0xe8, 0x03, 0x00, 0x00}); err != nil {
		return
	}
	for {
		if _, err := c.Write([]byte{10}); err != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (d *dripServer) mostOpen() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.maxOpen
}

// TestSlowServerStarvesNoOne: four DatabaseUsers of one namespace on a target whose server drips bytes and never
// answers take at most their share of the two workers (one), so a DatabaseUser of another namespace on another
// target is Ready within 2.5 s, before the first slow check ends; each slow check ends at the reconcile's
// deadline (3 s here), and every slow DatabaseUser gets its turn: DatabaseUnreachable. Without the deadline,
// both workers would wait forever; without the shares, the other DatabaseUser would wait behind two rounds
// of deadlines, and without the rule that one whose check just ended waits behind those put back, the first
// slow DatabaseUser would take the share again and again.
func TestSlowServerStarvesNoOne(t *testing.T) {
	mariadbtest.Require(t, server)
	drip := startDripServer(t)
	port := drip.ln.Addr().(*net.TCPAddr).Port
	startOperatorWith(t, nil, randomPassword(t, "badadmin"),
		map[string]mysqlaccount.Target{"dripping": {Host: "127.0.0.1", Port: port, User: "admin", Password: randomPassword(t, "drip")}},
		databaseuser.Config{ResyncPeriod: resync, ReconcileTimeout: 3 * time.Second})
	flood, other := env.NewNamespace(t, "flood"), env.NewNamespace(t, "other")
	mkSecret(t, flood, "s", map[string]string{"pw": randomPassword(t, "flood")})
	var slow []*mygroupv1alpha1.DatabaseUser
	for i := range 4 {
		d := newDBU(flood, fmt.Sprintf("slow-%d", i), uniqueUser("slow"), "s", "pw")
		d.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "dripping"}
		testenv.Create(t, env.Client, d)
		slow = append(slow, d)
	}
	poll(t, timeout, "a check waiting on the dripping server", func() error {
		if drip.mostOpen() == 0 {
			return fmt.Errorf("no connection yet")
		}
		return nil
	})
	start := time.Now()
	_, key := readyUser(t, other, "fast", uniqueUser("fast"), randomPassword(t, "fast"))
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("%s took %v to be Ready while the slow server held its share", key, took.Round(time.Millisecond))
	}
	for _, d := range slow {
		waitReady(t, client.ObjectKeyFromObject(d), metav1.ConditionFalse, mygroupv1alpha1.ReasonDatabaseUnreachable)
	}
}
