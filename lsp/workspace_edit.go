package lsp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.lsp.dev/protocol"
)

// The workspace edit of LSP 3.16, as Reika sends it. go.lsp.dev/protocol
// v0.12.0 holds only plain text edits in documentChanges (lsp/doc.go,
// defect 6), so annotated edits and file creation have their own structs
// here, sent with a raw workspace/applyEdit call.

// WorkspaceEdit is either DocumentChanges (versioned edits, file
// creation, change annotations) or, for clients without them, Changes.
type WorkspaceEdit struct {
	Changes           map[protocol.DocumentURI][]TextEdit `json:"changes,omitempty"`
	DocumentChanges   []DocumentChange                    `json:"documentChanges,omitempty"`
	ChangeAnnotations map[string]ChangeAnnotation         `json:"changeAnnotations,omitempty"`
}

// Empty reports whether the edit changes nothing.
func (w WorkspaceEdit) Empty() bool { return len(w.Changes) == 0 && len(w.DocumentChanges) == 0 }

// DocumentChange is one entry of documentChanges: a TextDocumentEdit or a
// CreateFile, whichever is set.
type DocumentChange struct {
	TextDocumentEdit *TextDocumentEdit
	CreateFile       *CreateFile
}

// MarshalJSON writes the entry that is set.
func (c DocumentChange) MarshalJSON() ([]byte, error) {
	switch {
	case c.TextDocumentEdit != nil && c.CreateFile == nil:
		return json.Marshal(c.TextDocumentEdit)
	case c.CreateFile != nil && c.TextDocumentEdit == nil:
		return json.Marshal(c.CreateFile)
	}
	return nil, errors.New("a document change must be exactly one of a text document edit and a file creation")
}

// UnmarshalJSON reads a text document edit, or a file creation when the
// entry's kind is "create".
func (c *DocumentChange) UnmarshalJSON(data []byte) error {
	var probe struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	*c = DocumentChange{}
	switch probe.Kind {
	case "":
		c.TextDocumentEdit = new(TextDocumentEdit)
		return json.Unmarshal(data, c.TextDocumentEdit)
	case "create":
		c.CreateFile = new(CreateFile)
		return json.Unmarshal(data, c.CreateFile)
	}
	return fmt.Errorf("unsupported document change kind %q", probe.Kind)
}

// TextDocumentEdit is the edits to one document at one version.
type TextDocumentEdit struct {
	TextDocument VersionedDocument `json:"textDocument"`
	Edits        []TextEdit        `json:"edits"`
}

// VersionedDocument names a document and the version the edits were made
// against; Version is nil (null) for a file that is not open, whose text
// on disk is the reference.
type VersionedDocument struct {
	URI     protocol.DocumentURI `json:"uri"`
	Version *int32               `json:"version"`
}

// TextEdit replaces Range with NewText; with an AnnotationID it is an
// AnnotatedTextEdit.
type TextEdit struct {
	Range        protocol.Range `json:"range"`
	NewText      string         `json:"newText"`
	AnnotationID string         `json:"annotationId,omitempty"`
}

// CreateFile creates an empty file; Reika never overwrites one.
type CreateFile struct {
	Kind         string               `json:"kind"` // "create"
	URI          protocol.DocumentURI `json:"uri"`
	Options      *CreateFileOptions   `json:"options,omitempty"`
	AnnotationID string               `json:"annotationId,omitempty"`
}

// CreateFileOptions are written out in full: false is what Reika means.
type CreateFileOptions struct {
	Overwrite      bool `json:"overwrite"`
	IgnoreIfExists bool `json:"ignoreIfExists"`
}

// ChangeAnnotation describes a group of changes; with NeedsConfirmation
// the client asks the user before applying them (VS Code: its refactor
// preview, every box unticked). Without it the label only names the
// change, in the editor's undo history and its edit list.
type ChangeAnnotation struct {
	Label             string `json:"label"`
	NeedsConfirmation bool   `json:"needsConfirmation,omitempty"`
	Description       string `json:"description,omitempty"`
}

// ApplyWorkspaceEditParams are the params of workspace/applyEdit.
type ApplyWorkspaceEditParams struct {
	Label string        `json:"label,omitempty"`
	Edit  WorkspaceEdit `json:"edit"`
}

// ApplyWorkspaceEditResult is the client's answer to workspace/applyEdit.
type ApplyWorkspaceEditResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
	// FailedChange is the index in documentChanges of the change that
	// failed, when the client says.
	FailedChange *uint32 `json:"failedChange,omitempty"`
}

// EditOptions are what the client supports, and how to describe the edit.
type EditOptions struct {
	// DocumentChanges: workspace.workspaceEdit.documentChanges. Without
	// it the edit is the plain changes map, unversioned.
	DocumentChanges bool
	// Annotations: workspace.workspaceEdit.changeAnnotationSupport. Every
	// edit and creation then carries an annotation that names it; it needs
	// the user's confirmation only for a protected path, or under Confirm.
	// An ordinary edit applies at once (the user keeps or undoes it in the
	// editor): a preview whose boxes start unticked applies nothing when
	// the user just presses Apply.
	Annotations bool
	// Confirm asks for the user's yes to every change: the run's trust
	// mode is "ask" (tools.AskAll).
	Confirm bool
	// ResourceCreate: "create" in workspace.workspaceEdit.resourceOperations.
	ResourceCreate bool
	// Label says what the agent was asked; it becomes each annotation's
	// description.
	Label string
	// VersionZeroAsOne sends version 1 for a document at version 0:
	// Neovim (0.7 to 0.11) opens buffers at 0 and checks only versions
	// above 0, so an edit for version 0 would land on the user's newer
	// text unchecked; as 1 it applies to an untouched buffer (still at
	// 0) and is skipped once the user typed (the version is then the
	// buffer's change count, above 1).
	VersionZeroAsOne bool
}

// BuildWorkspaceEdit turns plans into one workspace edit: per file, a
// TextDocumentEdit at the version the plan was made against (null for a
// file that is not open), one edit per hunk, in document order; a new file
// is a CreateFile followed by the insertion of its text. uriOf names a
// file by its absolute path; pos converts a byte offset of a text to a
// position in the negotiated encoding. Plans that change nothing are left
// out. A new file for a client that cannot create files, and two plans for
// one file, are errors.
func BuildWorkspaceEdit(plans []EditPlan, uriOf func(abs string) protocol.DocumentURI, pos func(text string, offset int) protocol.Position, opt EditOptions) (WorkspaceEdit, error) {
	return buildEdit(plans, uriOf, pos, opt, planLabel)
}

// HunkWorkspaceEdit is the workspace edit for hunk index (0-based, as
// HunkEdit.Index) of plan alone, for an "apply hunk" code action.
func HunkWorkspaceEdit(plan EditPlan, index int, uriOf func(abs string) protocol.DocumentURI, pos func(text string, offset int) protocol.Position, opt EditOptions) (WorkspaceEdit, error) {
	for _, h := range plan.Hunks {
		if h.Index != index {
			continue
		}
		one := plan
		one.Hunks = []HunkEdit{h}
		return buildEdit([]EditPlan{one}, uriOf, pos, opt, func(p EditPlan) string {
			if p.Creates() {
				return planLabel(p)
			}
			return fmt.Sprintf("Reika: change %d of %d to %s", index+1, max(len(p.Proposal.Hunks), 1), displayName(p.Proposal))
		})
	}
	return WorkspaceEdit{}, fmt.Errorf("%s has no hunk %d that changes anything", displayName(plan.Proposal), index+1)
}

func buildEdit(plans []EditPlan, uriOf func(abs string) protocol.DocumentURI, pos func(text string, offset int) protocol.Position, opt EditOptions, label func(EditPlan) string) (WorkspaceEdit, error) {
	var w WorkspaceEdit
	annotate := opt.Annotations && opt.DocumentChanges
	seen := map[protocol.DocumentURI]bool{}
	for _, p := range plans {
		if p.Empty() {
			continue
		}
		name := displayName(p.Proposal)
		uri := uriOf(p.Proposal.Abs)
		if seen[uri] {
			return WorkspaceEdit{}, fmt.Errorf("two proposals for %s in one workspace edit: plan the second after the first is applied", name)
		}
		seen[uri] = true
		if p.Creates() && !(opt.DocumentChanges && opt.ResourceCreate) {
			return WorkspaceEdit{}, fmt.Errorf("this editor cannot create files through the language server (its workspace edits have no create operation), so %s was not created; nothing was applied: create the file, then ask again", name)
		}
		id := ""
		if annotate {
			id = "reika:" + name
			if w.ChangeAnnotations == nil {
				w.ChangeAnnotations = map[string]ChangeAnnotation{}
			}
			w.ChangeAnnotations[id] = ChangeAnnotation{Label: label(p), NeedsConfirmation: opt.Confirm || p.Proposal.Protected != "", Description: annotationDescription(p, opt.Label)}
		}
		edits := make([]TextEdit, 0, len(p.Hunks))
		text := p.Current.Text
		for _, h := range p.Hunks {
			edits = append(edits, TextEdit{
				Range:        protocol.Range{Start: pos(text, h.OldStart), End: pos(text, h.OldEnd)},
				NewText:      h.Text,
				AnnotationID: id,
			})
		}
		if !opt.DocumentChanges {
			if w.Changes == nil {
				w.Changes = map[protocol.DocumentURI][]TextEdit{}
			}
			w.Changes[uri] = edits
			continue
		}
		if p.Creates() {
			w.DocumentChanges = append(w.DocumentChanges, DocumentChange{CreateFile: &CreateFile{
				Kind: "create", URI: uri, Options: &CreateFileOptions{}, AnnotationID: id,
			}})
		}
		if len(edits) == 0 {
			continue
		}
		doc := VersionedDocument{URI: uri}
		if p.Current.Open && !p.Creates() {
			v := p.Current.Version
			if v == 0 && opt.VersionZeroAsOne {
				v = 1
			}
			doc.Version = &v
		}
		w.DocumentChanges = append(w.DocumentChanges, DocumentChange{TextDocumentEdit: &TextDocumentEdit{TextDocument: doc, Edits: edits}})
	}
	return w, nil
}

// planLabel says what a plan proposes: "Reika: 2 changes to main.go",
// and that the path is protected when it is (VS Code's preview shows the
// label, not the reason).
func planLabel(p EditPlan) string {
	if p.Proposal.Protected != "" {
		return plainLabel(p) + " (PROTECTED: " + p.Proposal.Protected + ")"
	}
	return plainLabel(p)
}

func plainLabel(p EditPlan) string {
	name := displayName(p.Proposal)
	if p.Creates() {
		return "Reika: create " + name
	}
	if n := len(p.Hunks); n != 1 {
		return fmt.Sprintf("Reika: %d changes to %s", n, name)
	}
	return "Reika: 1 change to " + name
}

// annotationDescription says what the agent was asked, and whether the
// hunks were moved to fit the user's own edits.
func annotationDescription(p EditPlan, asked string) string {
	var parts []string
	if asked != "" {
		parts = append(parts, asked)
	}
	if p.Reanchored {
		parts = append(parts, "placed around your edits made since the agent read the file")
	}
	if len(parts) == 0 {
		return "proposed by the agent; review before applying"
	}
	return strings.Join(parts, "; ")
}
