package langserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// typescript-language-server runs a tsserver it looks for, in its own
// order: the one its initializationOptions name, else the workspace's own
// (node_modules/typescript, .yarn/sdks, .vscode/pnpify), else its own.
// The workspace's is code the model may have written: Reika names the
// typescript installed beside the server, so that nothing of the
// workspace runs. That tsserver loads the plugins a tsconfig.json names
// only from its own install (it is not given --allowLocalPluginLoads, nor
// probe locations), and it fetches no @types packages (automatic typing
// acquisition runs npm).

// tsName is typescript-language-server's name among the servers.
const tsName = "typescript-language-server"

// tsInit are typescript-language-server's initializationOptions.
type tsInit struct {
	DisableAutomaticTypingAcquisition bool       `json:"disableAutomaticTypingAcquisition"`
	Plugins                           []struct{} `json:"plugins"`
	TSServer                          tsServer   `json:"tsserver"`
}

type tsServer struct {
	// Path is the tsserver.js to run.
	Path string `json:"path"`
	// UseSyntaxServer "never": one tsserver answers everything. Its
	// default adds a syntax-only server that answers while the project
	// loads, from the one file alone (a definition is then the import).
	UseSyntaxServer string `json:"useSyntaxServer"`
}

// initOptions are the initializationOptions srv starts with: nil for a
// server that needs none.
func initOptions(srv Server) (any, error) {
	if srv.Name != tsName {
		return nil, nil
	}
	tsserver, err := besideTSServer(srv.Command[0])
	if err != nil {
		return nil, err
	}
	return tsInit{DisableAutomaticTypingAcquisition: true, Plugins: []struct{}{}, TSServer: tsServer{Path: tsserver, UseSyntaxServer: "never"}}, nil
}

// besideTSServer finds the tsserver.js installed with the program: the
// program's package directory is the one whose parent is a node_modules
// (the program's real path leads there through the links npm makes); its
// typescript is in the package's own node_modules or beside it.
func besideTSServer(program string) (string, error) {
	path, err := exec.LookPath(program)
	if err == nil {
		path, err = filepath.EvalSymlinks(path)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", program, err)
	}
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		modules := filepath.Dir(dir)
		if filepath.Base(modules) != "node_modules" {
			continue
		}
		for _, ts := range []string{filepath.Join(dir, "node_modules", "typescript"), filepath.Join(modules, "typescript")} {
			tsserver := filepath.Join(ts, "lib", "tsserver.js")
			if st, err := os.Stat(tsserver); err == nil && st.Mode().IsRegular() {
				return tsserver, nil
			}
		}
		break
	}
	return "", fmt.Errorf("no typescript installed beside %s (%s): install it there (npm install -g typescript), so that the server does not run the workspace's own node_modules/typescript", program, path)
}
