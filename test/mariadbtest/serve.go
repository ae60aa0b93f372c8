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

package mariadbtest

import (
	"net"
	"sync"
	"testing"
)

// Serve listens on a free port of 127.0.0.1 and hands each connection to serve, in a goroutine of its own, until
// the test ends; then it closes the listener and waits for every serve to return. It returns the listener.
func Serve(t testing.TB, serve func(net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed
			}
			conns.Go(func() { serve(c) })
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-accepting
		conns.Wait()
	})
	return ln
}

// Port is the port of a listener Serve returned.
func Port(ln net.Listener) int { return ln.Addr().(*net.TCPAddr).Port }
