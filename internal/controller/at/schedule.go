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

package at

import (
	"errors"
	"fmt"
	"time"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
)

// errUnknownZone is Schedule's error for a timeZone the zone database does not hold.
var errUnknownZone = errors.New("unknown time zone")

// Schedule is the instant an At's command is due: spec.schedule as a UTC time, or, with spec.timeZone, as a
// wall-clock time in that zone (LocalTime). An error wrapping errUnknownZone names a zone the operator's zone
// database (time/tzdata, linked into the manager) does not know; any other error a schedule the schema should
// have refused (an At stored before it did).
func Schedule(at *cnatv1alpha1.At) (time.Time, error) {
	if at.Spec.TimeZone == nil {
		t, err := time.Parse(cnatv1alpha1.ScheduleLayout, at.Spec.Schedule)
		if err != nil {
			return time.Time{}, fmt.Errorf("schedule %q is not a UTC time like %s", at.Spec.Schedule, cnatv1alpha1.ScheduleLayout)
		}
		return t, nil
	}
	zone := *at.Spec.TimeZone
	// "" and "Local" are the UTC and the operator's own zone to time.LoadLocation, never what a tenant meant
	// (the schema refuses both).
	if zone == "" || zone == "Local" {
		return time.Time{}, fmt.Errorf("timeZone %q: %w", zone, errUnknownZone)
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return time.Time{}, fmt.Errorf("timeZone %q: %w", zone, errUnknownZone)
	}
	wall, err := time.Parse(cnatv1alpha1.LocalScheduleLayout, at.Spec.Schedule)
	if err != nil {
		return time.Time{}, fmt.Errorf("schedule %q is not a wall-clock time like %s (timeZone %s)",
			at.Spec.Schedule, cnatv1alpha1.LocalScheduleLayout, zone)
	}
	return LocalTime(wall, loc), nil
}

// LocalTime is the instant at which the clocks of loc show wall (whose own zone is ignored), decided where the
// zone's clocks jump, as CronJob's users would expect of a one-off run:
//   - a wall-clock time loc skips (spring forward: 02:30 on a night that jumps from 02:00 to 03:00) is read
//     with the offset in force before the jump, so it runs as much later as the gap is long (03:30 new time),
//     which is also what time.Date gives;
//   - a wall-clock time loc shows twice (fall back: the hour from 02:00 to 03:00 repeated) is its first
//     occurrence (still summer time), the earlier instant; time.Date does not say which it gives.
func LocalTime(wall time.Time, loc *time.Location) time.Time {
	y, mo, d := wall.Date()
	h, mi, s := wall.Clock()
	naive := time.Date(y, mo, d, h, mi, s, wall.Nanosecond(), time.UTC)
	// The offsets in force around that wall-clock time: a zone changes its offset at most once in two days.
	_, before := naive.Add(-26 * time.Hour).In(loc).Zone()
	_, after := naive.Add(26 * time.Hour).In(loc).Zone()
	var best time.Time
	for _, off := range []int{before, after} {
		t := naive.Add(-time.Duration(off) * time.Second)
		if sameWall(t.In(loc), naive) && (best.IsZero() || t.Before(best)) {
			best = t
		}
	}
	if best.IsZero() {
		// Exists under neither offset: the gap. Read it with the offset before the jump.
		best = naive.Add(-time.Duration(before) * time.Second)
	}
	return best.UTC()
}

func sameWall(t, naive time.Time) bool {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC).Equal(naive)
}
