package acp

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/tools"
)

// terminalOutputLimit is the output a terminal keeps for the agent; the
// tools keep at most as much.
const terminalOutputLimit = 1 << 20

// terminal runs a command the sandbox does not contain in the client's
// terminal (terminal/create), shown on the tool call that runs it, and
// waits for its exit; when ctx ends first the command is killed and what
// it printed by then is returned with ctx's error. The terminal is
// released in every case.
func (s *session) terminal(ctx context.Context, command, dir string) (string, int, error) {
	limit := terminalOutputLimit
	res, err := s.srv.conn.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: s.id, Command: "bash", Args: []string{"-c", command}, Cwd: &dir, OutputByteLimit: &limit})
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", tools.ErrNoTerminal, err)
	}
	id := res.TerminalId
	// The terminal is the client's until it is released, whatever ctx.
	after, cancel := context.WithTimeout(s.srv.ctx, clientTimeout)
	defer cancel()
	defer s.srv.conn.ReleaseTerminal(after, sdk.ReleaseTerminalRequest{SessionId: s.id, TerminalId: id})
	s.mu.Lock()
	call := sdk.ToolCallId(s.running)
	s.mu.Unlock()
	if call != "" {
		s.update(sdk.UpdateToolCall(call, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(id)})))
	}
	exit, werr := s.srv.conn.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: s.id, TerminalId: id})
	if ctx.Err() != nil {
		s.srv.conn.KillTerminal(after, sdk.KillTerminalRequest{SessionId: s.id, TerminalId: id})
	}
	out, oerr := s.srv.conn.TerminalOutput(after, sdk.TerminalOutputRequest{SessionId: s.id, TerminalId: id})
	switch {
	case ctx.Err() != nil:
		return out.Output, 0, ctx.Err()
	case werr != nil:
		return "", 0, werr
	case oerr != nil:
		return "", 0, oerr
	case exit.ExitCode != nil:
		return out.Output, *exit.ExitCode, nil
	case exit.Signal != nil:
		return out.Output, -1, nil
	}
	return out.Output, 0, errors.New("the terminal reported neither an exit code nor a signal")
}
