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

package databaseuser

import (
	"errors"
	"fmt"
	"net"

	"github.com/go-sql-driver/mysql"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/health"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// What a step comes to: an outcome, the Ready condition's reason and message, told to the tenant without
// what is the cluster admin's.

// outcome is the result of one check: the Ready condition's reason and message, and how to go on.
type outcome struct {
	reason string
	// message is what the DatabaseUser's condition and Events say: only what concerns its own account.
	message string
	// detail, when set, is the full cause for the operator's log and the DatabaseTarget's status (both the
	// cluster admin's): the server's address, the admin account, the server's own error text.
	detail string
	// retry asks for exponential backoff; otherwise a failure waits for a change of the DatabaseUser or its
	// DatabaseTarget, or, with recheck, for the next resync (the cause is in the database server).
	retry, recheck bool
}

func (o outcome) ready() bool { return o.reason == mygroupv1alpha1.ReasonReady }

// verdict is what generic tools are told of the outcome: Current when ready, InProgress while a retry may get
// there by itself (a server that does not answer yet), Failed when a person must change the DatabaseUser, its
// DatabaseTarget or the database server first.
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

// logged is what the operator's log says of the outcome: the full cause.
func (o outcome) logged() string {
	if o.detail != "" {
		return o.detail
	}
	return o.message
}

// within puts the outcome's message, and its detail, between before and after.
func (o outcome) within(before, after string) outcome {
	o.message = before + o.message + after
	if o.detail != "" {
		o.detail = before + o.detail + after
	}
	return o
}

// failure turns a SQL error into an outcome, with every secret redacted from its message and detail.
// mysqlaccount puts no password, hash or digest into its errors; the redaction is a second guard. The message,
// for the DatabaseUser's status and Events, is tenantMessage's; the detail, the whole error, goes to the
// operator's log and the DatabaseTarget's status.
func failure(err error, prefix string, secrets ...string) outcome {
	msg := prefix + redact(tenantMessage(err), secrets...)
	out := outcome{message: msg, detail: prefix + redact(mysqlaccount.Detail(err), secrets...)}
	switch mysqlaccount.KindOf(err) {
	case mysqlaccount.KindUnreachable:
		out.reason, out.retry = mygroupv1alpha1.ReasonDatabaseUnreachable, true
	case mysqlaccount.KindAccessDenied:
		out.reason, out.retry = mygroupv1alpha1.ReasonAccessDenied, true
	case mysqlaccount.KindInvalidAccount:
		out.reason = mygroupv1alpha1.ReasonInvalidUser
	case mysqlaccount.KindInvalidGrant:
		out.reason = mygroupv1alpha1.ReasonInvalidGrant
	case mysqlaccount.KindReserved:
		out.reason = mygroupv1alpha1.ReasonAccountReserved
	case mysqlaccount.KindNotClaimed:
		out.reason, out.recheck = mygroupv1alpha1.ReasonAccountNotOwned, true
	case mysqlaccount.KindAdoptionRefused:
		// The server's admin may revoke what stands in the way: looked at again at every resync.
		out.reason, out.recheck = mygroupv1alpha1.ReasonAdoptionRefused, true
	case mysqlaccount.KindUnsupportedServer:
		out.reason, out.recheck = mygroupv1alpha1.ReasonUnsupportedServer, true
	case mysqlaccount.KindPasswordTooLong:
		// The lengths only, never the password. No Secret watch: the next resync reads the Secret again.
		const more = ". Shorten it: until then the account is left as it is"
		out.reason, out.recheck = mygroupv1alpha1.ReasonPasswordTooLong, true
		out.message += more
		out.detail += more
	default:
		out.reason, out.retry = mygroupv1alpha1.ReasonDatabaseError, true
	}
	if out.detail == out.message {
		out.detail = ""
	}
	return out
}

// adminsPart ends the tenant-facing message of a failure whose cause is the cluster admin's to see.
const adminsPart = "; the cluster admin finds the cause in the DatabaseTarget's status and the operator's log"

// tenantMessage is what a DatabaseUser's status and Events say of err: only what concerns the tenant's own
// account. The server's address, the admin account's name, the operator's IP (MySQL's access-denied errors
// name 'user'@'client-host') and any other text of the server's stay out: they are the cluster admin's. The
// server's error number stays (it names nothing). The errors mysqlaccount makes of the tenant's own request
// (a reserved or invalid name, a grant, an account not theirs, adoption refused, the password's length, the
// server's version) are given as they are, unless they wrap an error of the server's or the network.
func tenantMessage(err error) string {
	code := ""
	var me *mysql.MySQLError
	fromServer := errors.As(err, &me)
	if fromServer {
		code = fmt.Sprintf(" (error %d)", me.Number)
	}
	var ne net.Error
	foreign := fromServer || errors.As(err, &ne)
	var e *mysqlaccount.Error
	if !errors.As(err, &e) {
		return "the operator failed to manage the account" + code + adminsPart
	}
	switch e.Kind {
	case mysqlaccount.KindUnreachable:
		return "the operator cannot reach the database server" + code + adminsPart
	case mysqlaccount.KindAccessDenied:
		return "the database server denied access to the operator's admin account" + code + adminsPart
	case mysqlaccount.KindUnsupportedServer:
		if foreign {
			return "the operator cannot tell which database server this is" + code + adminsPart
		}
		return e.Err.Error() // what the server reported of its version, and why it is not supported
	case mysqlaccount.KindOther:
		return "the database server answered with an error" + code + adminsPart
	}
	if foreign { // not even e.Op: a connection's names the server and the admin account
		return "the database server refused what the operator asked of it for this account" + code + adminsPart
	}
	return err.Error()
}
