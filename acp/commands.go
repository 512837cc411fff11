package acp

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// commands are the slash commands a session offers
// (available_commands_update), the language server's commands by name.
var commands = []sdk.AvailableCommand{
	{Name: "compact", Description: "fold the conversation into a recap now (the note round first)"},
	{Name: "recap", Description: "show the recap the requests carry"},
	{Name: "status", Description: "the context window: the chip, its parts (prefix, map, recap, history, results) and the engine's prompt cache"},
	{Name: "new", Description: "start a new conversation in this workspace"},
	{Name: "save", Description: "save the whole transcript as Markdown and say where"},
}

func (s *session) sendCommands() {
	s.update(sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: commands}})
}

// commandOf reads a prompt that is one of the commands ("/status").
func commandOf(text string) (string, bool) {
	f := strings.Fields(text)
	if len(f) != 1 || !strings.HasPrefix(f[0], "/") {
		return "", false
	}
	name := strings.TrimPrefix(f[0], "/")
	for _, c := range commands {
		if c.Name == name {
			return name, true
		}
	}
	return "", false
}

// command runs one; what it has to say is the turn's answer.
func (s *session) command(ctx context.Context, name string) (sdk.PromptResponse, error) {
	a := s.agentSession()
	say := func(format string, args ...any) { s.update(sdk.UpdateAgentMessageText(fmt.Sprintf(format, args...))) }
	switch name {
	case "compact":
		before, after, err := a.Compact(ctx, s.reporter())
		switch {
		case ctx.Err() != nil:
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
		case err != nil:
			say("Nothing was folded: %v", err)
		default:
			size := 0
			if r := a.Recap(); r != nil {
				size = len(r.Text)
			}
			say("Folded the conversation: %d → %d tokens, with a recap of %d bytes.", before, after, size)
		}
		s.chip(a.Chip())
	case "recap":
		if r := a.Recap(); r != nil {
			say("%s", r.Text)
		} else {
			say("No recap yet: nothing has been folded in this session.")
		}
	case "status":
		info := a.Info()
		model, _ := a.Models()
		say("%s\n\n%s\n\nengine: %s at %s\nprompt cache: %s", a.Chip(), a.Breakdown(), model, info.Connection.Options.BaseURL, a.PromptCache().Text)
	case "new":
		old := a
		if err := s.startAgent(ctx, "", ""); err != nil {
			return sdk.PromptResponse{}, failure(err)
		}
		old.Close()
		// The protocol gives a session one id, which names the transcript
		// session/load resumes: the thread's id stays the first
		// conversation's.
		say("A new conversation: the model starts from the workspace alone. The last one is in %s; loading this thread after a restart resumes that one (a new thread in the editor keeps conversations apart).", old.TranscriptPath())
		s.chip(s.agentSession().Chip())
	case "save":
		path, err := a.SaveMarkdown()
		if err != nil {
			return sdk.PromptResponse{}, failure(fmt.Errorf("save the transcript: %w", err))
		}
		say("Saved the transcript to %s", path)
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

func itoa(n int) string { return strconv.Itoa(n) }
