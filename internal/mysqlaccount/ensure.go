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

import "context"

// Ensure makes the account match a and returns how many statements that write it ran (0 when it already
// matched). Nothing is executed for a reserved account, a grant on a system schema, a password longer than
// the server accepts (nothing read or hashed either), an account a.Claimant does not own (the target's admin
// among them), or an account to adopt that holds privileges beyond the policy (KindReserved, KindInvalidGrant,
// KindPasswordTooLong, KindNotClaimed, KindAdoptionRefused).
//
// Ensure is the I/O around pure decisions, one step after the other, each step in a file of its own: refuse
// (check.go), Observe (client.go), decide (claim.go), checkAdoptable (adopt.go), plan (plan.go, with the
// password's forms from password.go) and apply (apply.go). What a step derives from a (the quoted name, the
// refusal's words, the password's digest) is derived once and passed on.
func (c *Client) Ensure(ctx context.Context, a Account) (int, error) {
	// Refused before anything is read or hashed; what passes gets its name quoted, once. Whatever the reason an
	// account is not the claimant's, the tenant is told it in the same words (notOwned).
	notClaimed := notOwned(a.User, a.Host)
	acct, err := refuse(a, c.server, c.admin, notClaimed)
	if err != nil {
		return 0, err
	}

	// What the server holds, and whether the account is the claimant's, or may be adopted.
	o, err := c.Observe(ctx, a.User, a.Host)
	if err != nil {
		return 0, err
	}
	d, err := decide(a, o, notClaimed)
	if err != nil {
		return 0, err
	}
	if d == adopt {
		// Before anything is recorded or set: an account holding more than the policy allows stays as it is.
		if err := c.checkAdoptable(ctx, a, acct); err != nil {
			return 0, err
		}
	}

	// The statements, planned before the claim is written: a plan the server cannot take leaves no claim
	// behind, which would otherwise make an account created later by someone else this DatabaseUser's.
	recordFirst := o.Claim == nil // a new account, or one adopted: recorded before anything is done to it
	if recordFirst {
		o.Claim = &claim{Claimant: a.Claimant}
	}
	salt, err := randomSalt()
	if err != nil {
		return 0, err
	}
	crypt := &sha2Crypter{salt: salt}
	stmts, digest, err := plan(a, acct, o, c.server, crypt)
	c.sha2CryptRuns += crypt.runs
	if err != nil {
		return 0, err
	}

	// Run them.
	return c.apply(ctx, a, notClaimed, recordFirst, stmts, digest)
}
