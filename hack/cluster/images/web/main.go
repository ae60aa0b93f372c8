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

// Command web is the local cluster's stand-in for nginx in the MyWeb and AppService samples: it serves the
// files under /usr/share/nginx/html (where those samples mount their page) over plain HTTP on port 80.
//
// Flags (or the environment variables WEB_ROOT and WEB_ADDR) change the directory and the address.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	root := flag.String("root", envOr("WEB_ROOT", "/usr/share/nginx/html"), "directory to serve")
	addr := flag.String("addr", envOr("WEB_ADDR", ":80"), "listen address")
	flag.Parse()

	srv := &http.Server{Addr: *addr, Handler: logRequests(newHandler(*root)), ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()

	log.Printf("serving %s on %s", *root, *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("web: %v", err)
	}
}

// newHandler serves the files under root, index.html for directories, like nginx's default site.
func newHandler(root string) http.Handler {
	return http.FileServer(http.Dir(root))
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Printf("%s %s %s", r.RemoteAddr, r.Method, r.URL.Path)
		next.ServeHTTP(w, r)
	})
}
