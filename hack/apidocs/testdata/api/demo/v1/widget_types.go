// Package v1 contains API Schema definitions for the demo v1 API group.
package v1

// ConditionReady says whether the widget works.
const ConditionReady = "Ready"

// Reasons of the Ready condition.
const (
	// ReasonWorks: Ready=True.
	ReasonWorks  = "Works"
	ReasonBroken = "Broken" // the widget broke
	// ReasonSecretMissing (another kind's) also applies.
)

// Mode is how fast.
type Mode string

const (
	// ModeFast is fast; a typed constant, not a reason.
	ModeFast Mode = "Fast"
)

// NotAReason is not listed.
const NotAReason = "x"

// Widget is a test kind.
// +kubebuilder:object:root=true
type Widget struct{}

// WidgetList lists widgets.
// +kubebuilder:object:root=true
type WidgetList struct{}
