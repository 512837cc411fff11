package acp

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"
)

// The ids of the session's config options: its mode, and the model its
// requests name.
const (
	modeOption  sdk.SessionConfigId = "mode"
	modelOption sdk.SessionConfigId = "model"
)

// configOptions are the session's options: its mode, as the modes API
// offers it, and its model, one of those the engine lists (when it lists
// any).
func (s *session) configOptions() []sdk.SessionConfigOption {
	st := s.modes()
	var opts sdk.SessionConfigSelectOptionsUngrouped
	for _, m := range st.AvailableModes {
		opts = append(opts, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.Id), Name: m.Name, Description: m.Description})
	}
	category := sdk.SessionConfigOptionCategoryMode
	out := []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{
		Id: modeOption, Name: "Mode", Category: &category, Type: "select",
		CurrentValue: sdk.SessionConfigValueId(st.CurrentModeId), Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts},
	}}}
	if m := s.modelOption(); m != nil {
		out = append(out, *m)
	}
	return out
}

// modelOption is the model as a config option, nil when the engine
// lists no model.
func (s *session) modelOption() *sdk.SessionConfigOption {
	a := s.agentSession()
	if a == nil {
		return nil
	}
	current, all := a.Models()
	if len(all) == 0 {
		return nil
	}
	var opts sdk.SessionConfigSelectOptionsUngrouped
	for _, m := range all {
		opts = append(opts, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m), Name: m})
	}
	category := sdk.SessionConfigOptionCategoryModel
	desc := "another model starts the conversation's prompt cache anew: the next request prefills it all"
	return &sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{
		Id: modelOption, Name: "Model", Category: &category, Type: "select", Description: &desc,
		CurrentValue: sdk.SessionConfigValueId(current), Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts},
	}}
}

// setOption sets one of the session's options to value.
func (s *session) setOption(ctx context.Context, id sdk.SessionConfigId, value sdk.SessionConfigValueId) error {
	switch id {
	case modeOption:
		return s.setMode(sdk.SessionModeId(value))
	case modelOption:
		return s.setModel(ctx, string(value))
	}
	return fmt.Errorf("no option %q: the session's options are %q and %q", id, modeOption, modelOption)
}

// setModel switches the session's model and tells the user its window
// and what the switch costs: the engine prefills the whole conversation
// again.
func (s *session) setModel(ctx context.Context, model string) error {
	a := s.agentSession()
	if a == nil && s.ready != nil && !s.isReady() {
		return errors.New("the session is still starting (it asks about the editor's MCP servers first): choose the model once it has started")
	}
	if a == nil {
		return errors.New("the session was closed: start a new one")
	}
	told, err := a.SetModel(ctx, model)
	if err != nil {
		return err
	}
	s.status(told)
	s.chip(a.Chip()) // the new model's window
	return nil
}
