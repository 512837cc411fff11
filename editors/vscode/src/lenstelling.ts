import * as vscode from "vscode";

// How the review tells VS Code that its CodeLens changed. VS Code asks a
// provider again a debounce after onDidChangeCodeLenses fires (its moving
// average of how long the last asks took, 250 ms at least), and each
// firing starts that wait over; an editor that loses the focus while it
// waits drops the ask until it has the focus again. Told again on fixed
// timers (0.75, 2 and 5 s, as before), a slow ask under load was put off
// each time: the lens came 10 to 17 s late. So the review tells once, and
// again only when VS Code has not asked for a file's lenses since it was
// told, after twice the time it took to ask before (two seconds at least):
// a waiting ask is then never put off, and a dropped one is made again.

/** The least time to wait for VS Code's ask before telling again. */
const leastWait = 2000;
/** How many times a file is told again at most, per change. */
const retells = 3;

export class LensTelling implements vscode.Disposable {
  /** When each file was last told, and how many times again since the change. */
  private readonly pending = new Map<string, { at: number; again: number }>();
  /** The files whose lenses VS Code was last given some for. */
  private readonly given = new Set<string>();
  /** How long VS Code took to ask after a telling, on average (ms). */
  private took = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly fire: () => void) {}

  /** Tells VS Code that the lenses of these files changed. */
  told(uris: string[]): void {
    const now = Date.now();
    for (const u of uris) {
      this.pending.set(u, { at: now, again: 0 });
    }
    this.fire();
    this.watch();
  }

  /** VS Code asked for uri's lenses; some reads whether it got any. */
  asked(uri: string, some: boolean): void {
    const p = this.pending.get(uri);
    if (p) {
      const ms = Date.now() - p.at;
      this.took = this.took === 0 ? ms : (this.took * 3 + ms) / 4;
      this.pending.delete(uri);
    }
    if (some) {
      this.given.add(uri);
    } else {
      this.given.delete(uri);
    }
  }

  /** The files VS Code shows lenses of, as far as the review knows. */
  shown(): string[] {
    return [...this.given];
  }

  dispose(): void {
    clearTimeout(this.timer);
  }

  private wait(): number {
    return Math.max(leastWait, 2 * this.took);
  }

  /** Checks, once the wait is over, the files VS Code has not asked about. */
  private watch(): void {
    clearTimeout(this.timer);
    if (this.pending.size === 0) {
      return;
    }
    this.timer = setTimeout(() => {
      const visible = new Set(vscode.window.visibleTextEditors.map((e) => e.document.uri.toString()));
      const now = Date.now();
      let again = false;
      for (const [u, p] of this.pending) {
        // A file no editor shows is asked about when one does.
        if (!visible.has(u) || p.again >= retells) {
          this.pending.delete(u);
        } else if (now - p.at >= this.wait()) {
          p.at = now;
          p.again++;
          again = true;
        }
      }
      if (again) {
        this.fire();
      }
      this.watch();
    }, this.wait());
  }
}
