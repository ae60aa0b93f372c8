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

package mysqlaccount

import (
	"errors"
	"testing"
)

func TestQuoteIdent(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "alice", want: "`alice`"},
		{in: "a`b", want: "`a``b`"},
		{in: "``", want: "``````"},
		{in: `o'brien\`, want: "`o'brien\\`"},
		{in: "x`; DROP USER root; -- ", bad: true}, // trailing space
		{in: "x`; DROP USER root; --", want: "`x``; DROP USER root; --`"},
		{in: "用户", want: "`用户`"},
		{in: "nul\x00", bad: true},
		{in: "key🔑", bad: true},
		{in: "\xff", bad: true},
	} {
		got, err := quoteIdent(tc.in)
		if tc.bad {
			if !errors.Is(err, ErrInvalidName) {
				t.Errorf("quoteIdent(%q) = %q, %v; want ErrInvalidName", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("quoteIdent(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestEscapeDatabasePattern(t *testing.T) {
	if got, want := escapeDatabasePattern(`my_db%\x`), `my\_db\%\\x`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestNativePasswordHash(t *testing.T) {
	// The value MariaDB's PASSWORD('password') returns.
	if got, want := NativePasswordHash("password"), "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
