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

package database

import (
	"errors"
	"fmt"
	"net"

	"github.com/go-sql-driver/mysql"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/internal/controller/health"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// outcome is how one check of a Database went, as DatabaseUser's outcome: the Ready reason, the tenant's
// message (only what concerns its own database), the cluster admin's detail (for the log), and whether to
// retry with backoff (retry) or at the next resync (recheck); otherwise it waits for a change.
type outcome struct {
	reason, message, detail string
	retry, recheck          bool
}

func (o outcome) ready() bool { return o.reason == mygroupv1alpha1.ReasonReady }

// verdict is the outcome as kstatus reads it: Ready, or in progress (retried), or stalled.
func (o outcome) verdict() health.Verdict {
	v := health.Verdict{State: health.Failed, Reason: o.reason, Message: o.message}
	switch {
	case o.ready():
		v.State = health.Current
	case o.retry:
		v.State = health.InProgress
	}
	return v
}

// logged is what the operator's log says of the outcome: the detail when there is one.
func (o outcome) logged() string {
	if o.detail != "" {
		return o.detail
	}
	return o.message
}

// within wraps the outcome's message and detail in more words.
func (o outcome) within(before, after string) outcome {
	o.message = before + o.message + after
	if o.detail != "" {
		o.detail = before + o.detail + after
	}
	return o
}

// shared is a target's Outcome (package databaseuser) as this kind's.
func shared(o *databaseuser.Outcome) outcome {
	return outcome{reason: o.Reason, message: o.Message, detail: o.Detail, retry: o.Retry, recheck: o.Recheck}
}

// adminsPart ends a message whose cause only the cluster admin may read.
const adminsPart = "; the cluster admin finds the cause in the DatabaseTarget's status and the operator's log"

// failure is the outcome of an error of the database's statements. The tenant reads the server's own words
// only for what its spec decides (the name, the character set, the collation).
func failure(err error) outcome {
	out := outcome{message: tenantMessage(err), detail: mysqlaccount.Detail(err)}
	switch mysqlaccount.KindOf(err) {
	case mysqlaccount.KindUnreachable:
		out.reason, out.retry = mygroupv1alpha1.ReasonDatabaseUnreachable, true
	case mysqlaccount.KindAccessDenied:
		out.reason, out.retry = mygroupv1alpha1.ReasonAccessDenied, true
	case mysqlaccount.KindNotClaimed:
		// Whoever holds the database may drop it or free its name: looked at again at every resync.
		out.reason, out.recheck = mygroupv1alpha1.ReasonDatabaseNotOwned, true
	case mysqlaccount.KindInvalidDatabase:
		out.reason = mygroupv1alpha1.ReasonInvalidDatabase
	case mysqlaccount.KindUnsupportedServer:
		out.reason, out.recheck = mygroupv1alpha1.ReasonUnsupportedServer, true
	default:
		out.reason, out.retry = mygroupv1alpha1.ReasonDatabaseError, true
	}
	if out.detail == out.message {
		out.detail = ""
	}
	return out
}

// tenantMessage is what the Database's status may say of err.
func tenantMessage(err error) string {
	code := ""
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		code = fmt.Sprintf(" (error %d)", me.Number)
	}
	var ne net.Error
	foreign := me != nil || errors.As(err, &ne)
	switch k := mysqlaccount.KindOf(err); {
	case k == mysqlaccount.KindInvalidDatabase:
		return err.Error() // the server's refusal of the spec's own name, character set or collation
	case k == mysqlaccount.KindUnreachable:
		return "the operator cannot reach the database server" + code + adminsPart
	case k == mysqlaccount.KindAccessDenied:
		return "the database server denied access to the operator's admin account" + code + adminsPart
	case foreign:
		return "the database server refused what the operator asked of it for this database" + code + adminsPart
	}
	var e *mysqlaccount.Error
	if errors.As(err, &e) {
		return err.Error()
	}
	return "the operator failed to manage the database" + adminsPart
}
