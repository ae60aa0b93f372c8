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

package registrytest_test

import (
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/operator101/operator101/test/registrytest"
	"github.com/operator101/operator101/test/testenv"
)

// OwnAddress's address is in its range, alone on a link named for this process, reachable here, and gone with the
// link when the test that made it ends.
func TestOwnAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a network link, as root, which -short (make test) does not; make ci runs this test")
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(root+"/hack/install-deps.sh", "iproute2").CombinedOutput(); err != nil {
		t.Fatalf("hack/install-deps.sh iproute2: %v\n%s", err, out)
	}
	_, own, _ := net.ParseCIDR(registrytest.OwnAddresses)
	var addrs []string
	var links []string
	t.Run("two", func(t *testing.T) {
		for range 2 {
			addr := registrytest.OwnAddress(t)
			ip := net.ParseIP(addr)
			if !own.Contains(ip) || ip.IsLoopback() {
				t.Errorf("OwnAddress gave %s, not an address of %s", addr, registrytest.OwnAddresses)
			}
			link := linkOf(t, ip)
			if want := regexp.MustCompile(`^o101-` + strconv.Itoa(os.Getpid()) + `-[0-9]+$`); link == nil || !want.MatchString(link.Name) {
				t.Fatalf("%s is on %v, not on a link o101-%d-N", addr, link, os.Getpid())
			}
			if a, err := link.Addrs(); err != nil || len(a) != 1 {
				t.Errorf("%s carries %v (%v), want %s alone", link.Name, a, err, addr)
			}
			l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
			if err != nil {
				t.Fatal(err)
			}
			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Errorf("no connection to %s: %v", l.Addr(), err)
			} else {
				c.Close()
			}
			l.Close()
			addrs, links = append(addrs, addr), append(links, link.Name)
		}
		if len(addrs) == 2 && (addrs[0] == addrs[1] || links[0] == links[1]) {
			t.Errorf("two calls gave the same address or link: %v on %v", addrs, links)
		}
	})
	for i, addr := range addrs {
		if l := linkOf(t, net.ParseIP(addr)); l != nil {
			t.Errorf("%s is still on %s after the test that made it", addr, l.Name)
		}
		if _, err := net.InterfaceByName(links[i]); err == nil {
			t.Errorf("the link %s is still there after the test that made it", links[i])
		}
	}
}

// linkOf is the link that carries ip, or nil.
func linkOf(t *testing.T, ip net.IP) *net.Interface {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, iface := range ifaces {
		addrs, err := iface.Addrs()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return &iface
			}
		}
	}
	return nil
}
