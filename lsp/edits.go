package lsp

import "github.com/reika-lsp/reika/agent/tools"

// A proposal is placed in the document as it is now by the tools' rule
// (agent/tools/anchor.go), which the ACP front end shares; these are its
// names here.
type (
	Current       = tools.Current
	HunkEdit      = tools.HunkEdit
	EditPlan      = tools.EditPlan
	PlanError     = tools.PlanError
	PlanErrorKind = tools.PlanErrorKind
)

// The kinds of PlanError.
const (
	PlanChanged   = tools.PlanChanged
	PlanAmbiguous = tools.PlanAmbiguous
	PlanMoved     = tools.PlanMoved
	PlanGone      = tools.PlanGone
	PlanCreated   = tools.PlanCreated
	PlanMalformed = tools.PlanMalformed
)

// PlanEdit places proposal p in the document as it is now (tools.PlanEdit).
func PlanEdit(p tools.Proposal, cur Current) (EditPlan, error) { return tools.PlanEdit(p, cur) }

func displayName(p tools.Proposal) string { return tools.DisplayName(p) }
