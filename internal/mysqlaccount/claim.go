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
	"maps"
	"slices"
)

// Claims. operator101 changes or drops only accounts it created for a DatabaseUser (the account's claimant),
// and it keeps that claim in the database server itself, in a table of its own schema (the claim table): the
// claim survives the operator, its reinstallation, and a cluster restored without it. The admin account creates
// the schema on first use.

// ClaimSchema is operator101's schema on each server: it holds the claims.
const ClaimSchema = "operator101"

// claimTable is the claim table, one row per account. Its columns keep the names they were created with
// (owner_uid, owner_namespace, owner_name: the claimant), since servers already hold it.
const claimTable = "`" + ClaimSchema + "`.`accounts`"

// claimUserKey is the claim table's UNIQUE key on user: a user name belongs to one claimant, whatever its
// host, and the server refuses a second row for it (an INSERT that fails on conflict), so that of claimants
// racing for one user name, even from several operator installs, exactly one records it.
const claimUserKey = "one_claim_per_user"

// createClaimTable creates the schema and the table. The columns compare user names as the server does
// (binary); hosts are stored as given (the DatabaseUser schema keeps them lower case).
var createClaimTable = []string{
	"CREATE DATABASE IF NOT EXISTS `" + ClaimSchema + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
	"CREATE TABLE IF NOT EXISTS " + claimTable + ` (
	  user            VARCHAR(80)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	  host            VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	  owner_uid       VARCHAR(64)  NOT NULL,
	  owner_namespace VARCHAR(63)  NOT NULL,
	  owner_name      VARCHAR(253) NOT NULL,
	  password_digest VARCHAR(64)  NOT NULL DEFAULT '',
	  auth_string     TEXT         NOT NULL,
	  PRIMARY KEY (user, host),
	  UNIQUE KEY ` + claimUserKey + ` (user)
	) ENGINE=InnoDB COMMENT='operator101: accounts it created, and for which DatabaseUser'`,
}

// addClaimUserKey migrates a claim table created before claimUserKey (keyed by user and host only). It runs
// once per client, when the key is missing; it fails when the table already holds a user name twice.
const addClaimUserKey = "ALTER TABLE " + claimTable + " ADD UNIQUE KEY " + claimUserKey + " (user)"

// Claimant is the DatabaseUser an account belongs to.
type Claimant struct {
	UID, Namespace, Name string
}

func (o Claimant) String() string { return o.Namespace + "/" + o.Name }

// claim is one row of the claim table: which DatabaseUser an account was created for.
type claim struct {
	Claimant
	// PasswordDigest is passwordDigest of the password last set (MySQL, where the stored hash is salted).
	PasswordDigest string
	// AuthString is the authentication_string the server stored when operator101 last set the password.
	AuthString string
}

// decision is what Ensure may do with an account.
type decision int

const (
	// manage: the account is claimed for this DatabaseUser, or does not exist yet and may be created.
	manage decision = iota
	// adopt: it exists without a record and the target allows taking it over: record it, then manage, once
	// Ensure has found every privilege it holds within the target's policy (checkAdoptable).
	adopt
)

// decide is the claim rule, a pure function of the desired account and what the server holds. It
// returns an error of KindNotClaimed when the account (or its user name) belongs to someone else. Its message,
// which ends up in the DatabaseUser's status, is the same in every such case (notOwned): it names no other
// DatabaseUser, no other host, and does not tell whether the account exists; what the server holds is in the
// error's Why, for the operator's log. notClaimed is notOwned(a.User, a.Host).
func decide(a Account, o *Observed, notClaimed refusal) (decision, error) {
	refused := func(format string, args ...any) (decision, error) {
		return 0, notClaimed(fmt.Sprintf(format, args...))
	}
	for _, h := range o.OtherHosts {
		if r := o.OtherClaims[h]; r == nil || r.UID != a.Claimant.UID {
			return refused("user %q also exists with host %q, which operator101 did not create for this DatabaseUser: "+
				"a second host would share that user name", a.User, h)
		}
	}
	// A user name is claimed whatever its host: a claim with another host whose account is not created yet
	// (or was dropped by hand) holds the name too.
	for _, h := range slices.Sorted(maps.Keys(o.OtherClaims)) {
		if r := o.OtherClaims[h]; r.UID != a.Claimant.UID {
			return refused("user %q is recorded with host %q as %s's", a.User, h, r.Claimant)
		}
	}
	switch r := o.Claim; {
	case r != nil && r.UID == a.Claimant.UID:
		return manage, nil
	case r != nil:
		if o.Exists {
			return refused("it is recorded as %s's (UID %s)", r.Claimant, r.UID)
		}
		return refused("it does not exist, but is recorded as %s's (UID %s); if that DatabaseUser is gone, the "+
			"server's admin can delete its row from %s.accounts", r.Claimant, r.UID, ClaimSchema)
	case o.Exists && a.Adopt:
		return adopt, nil
	case o.Exists:
		return refused("it exists and was not created by operator101 for this DatabaseUser " +
			"(the DatabaseTarget's existingAccounts: Adopt, with the user listed for this namespace in adoptableAccounts, " +
			"would take it over, if all its privileges fit the target's policy)")
	}
	return manage, nil
}
