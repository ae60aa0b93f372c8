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

import "database/sql"

// What the tests of package mysqlaccount_test reach that the operator keeps unexported.

// DB is the client's own pool: its session settings and TLS are what the tests look at.
func (c *Client) DB() *sql.DB { return c.db }

// EscapeDatabasePattern makes a database name literal in GRANT ... ON `db`.*.
var EscapeDatabasePattern = escapeDatabasePattern
