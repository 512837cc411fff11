package agent

import (
	"time"

	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/transcript"
)

// MCPServerConfig is an MCP server as the config file names one (agent/config's):
// the form a front end gives the servers its client offered
// (Setup.MCPServers).
type MCPServerConfig = config.MCPServer

// ACPServerKey is what the config file's acp_mcp_allow keeps of a server an
// ACP client offers (agent/config's).
func ACPServerKey(s MCPServerConfig) string { return config.ACPServerKey(s) }

// AllowACPServerAlways adds key to acp_mcp_allow in the config file at path.
func AllowACPServerAlways(path, key string) error { return config.AllowACPServerAlways(path, key) }

// NewSessionID is a new session's id as its transcript is named, for a
// front end that must answer with the id before the session starts
// (Setup.ID).
func NewSessionID(t time.Time) string { return transcript.NewID(t) }
