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

// Package proxyenv holds the cluster's proxy settings as the workloads operator101 runs in tenants' namespaces
// may get them: never with the user and password a proxy URL may hold.
package proxyenv

import (
	"iter"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Env is the operator's proxy variables (HTTP_PROXY, HTTPS_PROXY and NO_PROXY, in both spellings, as
// operator-lib's proxy.ReadProxyVarsFromEnv reads them) without the credentials of a proxy URL. New, its only
// constructor, takes them out; the zero Env holds no variable (no proxy).
type Env struct {
	vars              []corev1.EnvVar
	stripped, omitted []string
}

// New returns vars as they may be given to the workloads the operator runs in tenants' namespaces. A proxy
// URL's user and password are the operator's, not the tenants': HTTP_PROXY or HTTPS_PROXY carrying them
// (http://user:pass@proxy:3128) is passed on without them (http://proxy:3128), scheme, host and port kept; one
// whose credentials cannot be told from its address (an "@" left after the user and password are taken out,
// or a value that does not parse as a URL) is left out. NO_PROXY, a list of hosts, is passed on as it is.
// Stripped and Omitted name the variables so treated. vars is copied, never changed.
func New(vars []corev1.EnvVar) Env {
	if !slices.ContainsFunc(vars, hasUserinfo) {
		return Env{vars: slices.Clone(vars)}
	}
	var e Env
	e.vars = make([]corev1.EnvVar, 0, len(vars))
	for _, v := range vars {
		if !hasUserinfo(v) {
			e.vars = append(e.vars, v)
			continue
		}
		value, ok := withoutUserinfo(v.Value)
		if !ok {
			e.omitted = append(e.omitted, v.Name)
			continue
		}
		e.stripped = append(e.stripped, v.Name)
		v.Value = value
		e.vars = append(e.vars, v)
	}
	return e
}

// All yields the variables, in their order.
func (e Env) All() iter.Seq[corev1.EnvVar] { return slices.Values(e.vars) }

// Vars is a copy of the variables, nil when there is none.
func (e Env) Vars() []corev1.EnvVar { return slices.Clone(e.vars) }

// Len is the number of variables.
func (e Env) Len() int { return len(e.vars) }

// Stripped names the variables passed on without the user and password their URL held; never a value.
func (e Env) Stripped() []string { return e.stripped }

// Omitted names the variables left out because their credentials could not be told from the address; never a
// value.
func (e Env) Omitted() []string { return e.omitted }

// hasUserinfo tells whether e is a proxy URL variable (HTTP_PROXY or HTTPS_PROXY, either spelling) whose value
// may hold a user and password.
func hasUserinfo(e corev1.EnvVar) bool {
	return (strings.EqualFold(e.Name, "HTTP_PROXY") || strings.EqualFold(e.Name, "HTTPS_PROXY")) &&
		strings.Contains(e.Value, "@")
}

// withoutUserinfo returns the proxy URL v without its user and password; ok is false when v does not parse as
// a URL with a host, or still holds an "@" once they are taken out (as in a password with an unescaped "#" or
// "/", which ends the URL's authority early). Like Go's http.ProxyFromEnvironment, it reads a value without a
// scheme as http://v, and returns it without one.
func withoutUserinfo(v string) (string, bool) {
	raw, scheme := v, ""
	if !strings.Contains(v, "://") {
		raw, scheme = "http://"+v, "http://"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	u.User = nil
	out := strings.TrimPrefix(u.String(), scheme)
	if strings.Contains(out, "@") {
		return "", false
	}
	return out, true
}
