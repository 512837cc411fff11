import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const name = process.platform === "win32" ? "reika-lsp.exe" : "reika-lsp";

/**
 * The reika-lsp binary to start: the setting's (a leading ~ is the home
 * directory), else the first on PATH. An Error says what to do when there
 * is none.
 */
export function findServer(setting: string, env: NodeJS.ProcessEnv = process.env): string {
  if (setting !== "") {
    const p = setting.startsWith("~") ? path.join(os.homedir(), setting.slice(1)) : setting;
    if (!isExecutable(p)) {
      throw new Error(`reika.serverPath is ${setting}, which is not an executable file: fix the setting, or clear it to use reika-lsp from PATH`);
    }
    return p;
  }
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") {
      continue;
    }
    const p = path.join(dir, name);
    if (isExecutable(p)) {
      return p;
    }
  }
  throw new Error("reika-lsp is not on PATH: install it (go install github.com/reika-lsp/reika/cmd/reika-lsp@latest) or set reika.serverPath");
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
