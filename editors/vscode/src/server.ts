import * as child_process from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

// Where the extension looks for reika-lsp. An editor started from a
// desktop launcher does not get the login shell's PATH, so the places `go
// install` writes to are searched too. This file uses Node alone (no
// vscode), so that the search can be tested outside VS Code.

const name = process.platform === "win32" ? "reika-lsp.exe" : "reika-lsp";

/**
 * The command that installs the server, run in a clone of Reika, as the
 * README says. The module is not published, so `go install …@latest`
 * cannot find it.
 */
export const installCommand = "go install ./cmd/reika-lsp";

/** How to install the server, in words, for a message. */
export const installAdvice = `install it from a clone of Reika with ${installCommand} (the module is not published, so go install …@latest cannot find it)`;

/** The module path a clone of Reika declares in its go.mod. */
export const modulePath = "github.com/reika-lsp/reika";

/** Whether dir is a clone of Reika: its go.mod declares the module, and it has cmd/reika-lsp. */
export function isCheckout(dir: string): boolean {
  let mod: string;
  try {
    mod = fs.readFileSync(path.join(dir, "go.mod"), "utf8");
  } catch {
    return false;
  }
  const declared = /^module\s+(\S+)\s*$/m.exec(mod);
  return declared !== null && declared[1] === modulePath && fs.existsSync(path.join(dir, "cmd", "reika-lsp"));
}

/** What findServer searches besides the setting. */
export interface Search {
  /** The extension's folder: a packaged extension carries server/reika-lsp. */
  extensionDir?: string;
  env?: NodeJS.ProcessEnv;
  home?: string;
  /** `go env KEY`, or "" (no go, or it failed). */
  goEnv?: (key: string) => string;
}

/** A place the server may be, and why it is searched. */
export interface Candidate {
  path: string;
  from: string;
}

/** The server was found nowhere; searched lists the places looked at. */
export class NotFound extends Error {
  constructor(readonly searched: Candidate[]) {
    super(`reika-lsp was not found (looked in ${searched.map((c) => c.from).join(", ")}): ${installAdvice}, or set reika.serverPath`);
  }
}

/**
 * The places to look, in order: the binary inside the extension, PATH, `go
 * env GOBIN`, `$(go env GOPATH)/bin`, ~/go/bin, ~/.local/bin. Later ones
 * are computed only when the earlier ones fail (go env runs go).
 */
export function* candidates(s: Search = {}): Generator<Candidate> {
  const env = s.env ?? process.env;
  const home = s.home ?? os.homedir();
  if (s.extensionDir) {
    yield { path: path.join(s.extensionDir, "server", name), from: "the extension's server/" };
  }
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir !== "") {
      yield { path: path.join(dir, name), from: "PATH" };
    }
  }
  const goEnv = s.goEnv ?? ((key: string) => runGoEnv(key, env));
  const gobin = goEnv("GOBIN");
  if (gobin !== "") {
    yield { path: path.join(gobin, name), from: "go env GOBIN" };
  }
  for (const gopath of goEnv("GOPATH").split(path.delimiter)) {
    if (gopath !== "") {
      yield { path: path.join(gopath, "bin", name), from: "$(go env GOPATH)/bin" };
    }
  }
  yield { path: path.join(home, "go", "bin", name), from: "~/go/bin" };
  yield { path: path.join(home, ".local", "bin", name), from: "~/.local/bin" };
}

/**
 * The reika-lsp binary to start: the setting's (a leading ~ is the home
 * directory) when set, else the first executable among candidates(). It
 * throws an Error that says what to do: NotFound when there is none.
 */
export function findServer(setting: string, s: Search = {}): string {
  if (setting !== "") {
    const home = s.home ?? os.homedir();
    const p = setting.startsWith("~") ? path.join(home, setting.slice(1)) : setting;
    if (!isExecutable(p)) {
      throw new Error(`reika.serverPath is ${setting}, which is not an executable file: fix the setting, or clear it to let Reika find reika-lsp`);
    }
    return p;
  }
  const searched: Candidate[] = [];
  for (const c of candidates(s)) {
    if (isExecutable(c.path)) {
      return c.path;
    }
    if (!searched.some((x) => x.from === c.from)) {
      searched.push(c);
    }
  }
  throw new NotFound(searched);
}

/** `go env key` with the given environment, or "" when go is not there. */
function runGoEnv(key: string, env: NodeJS.ProcessEnv): string {
  try {
    return child_process.execFileSync("go", ["env", key], { env, encoding: "utf8", timeout: 5000, stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "";
  }
}

function isExecutable(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) {
      return false;
    }
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
