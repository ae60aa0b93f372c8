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
	"fmt"
	"regexp"
	"strconv"
)

// Flavor is the kind of server: MariaDB or MySQL. They share the protocol and most statements, but not how
// passwords are stored (MySQL 8.4 disables mysql_native_password and 9.x removes it) nor every privilege.
type Flavor string

const (
	MariaDB Flavor = "MariaDB"
	MySQL   Flavor = "MySQL"
)

// Server is what a server says it is, from SELECT VERSION().
type Server struct {
	Flavor              Flavor
	Major, Minor, Patch int
	// Version is VERSION() as the server reported it.
	Version string
}

func (s Server) String() string {
	return fmt.Sprintf("%s %d.%d.%d", s.Flavor, s.Major, s.Minor, s.Patch)
}

// atLeast compares the version with major.minor.
func (s Server) atLeast(major, minor int) bool {
	return s.Major > major || s.Major == major && s.Minor >= minor
}

// nativePasswords says whether the server stores mysql_native_password hashes, which are not salted (so a
// drift check compares them directly). operator101 uses caching_sha2_password on every MySQL it supports.
func (s Server) nativePasswords() bool { return s.Flavor == MariaDB }

// MaxPasswordLength is the longest password, in bytes, operator101 sets on s, or 0 for no limit: MySQL's
// caching_sha2_password takes at most MaxCachingSHA2PasswordLength; MariaDB's mysql_native_password has no
// limit.
func (s Server) MaxPasswordLength() int {
	if s.nativePasswords() {
		return 0
	}
	return MaxCachingSHA2PasswordLength
}

// supported says why operator101 does not manage accounts on s, or "" when it does: MariaDB 10.6 or later,
// MySQL 8.0 or later (docs/admin/database-targets.md says which were tested for real).
func (s Server) supported() string {
	switch {
	case s.Flavor == MariaDB && !s.atLeast(10, 6):
		return fmt.Sprintf("%s is not supported: MariaDB 10.6 or later is", s)
	case s.Flavor == MySQL && !s.atLeast(8, 0):
		return fmt.Sprintf("%s is not supported: MySQL 8.0 or later is", s)
	}
	return ""
}

var versionRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)`)

// ParseVersion reads VERSION(): "10.11.19-MariaDB-0+deb12u1" is MariaDB, "8.4.3" or "9.1.0-commercial" MySQL.
// (MariaDB's handshake says "5.5.5-10.11..." for old clients; VERSION() does not.)
func ParseVersion(v string) (Server, error) {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return Server{}, fmt.Errorf("the server's version %q is not major.minor.patch", v)
	}
	s := Server{Flavor: MySQL, Version: v}
	s.Major, _ = strconv.Atoi(m[1])
	s.Minor, _ = strconv.Atoi(m[2])
	s.Patch, _ = strconv.Atoi(m[3])
	if regexp.MustCompile(`(?i)mariadb`).MatchString(v) {
		s.Flavor = MariaDB
	}
	return s, nil
}
