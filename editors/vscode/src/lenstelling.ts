import * as vscode from "vscode";

// How the review tells VS Code that its CodeLens changed. VS Code asks a
// provider again a debounce after onDidChangeCodeLenses fires (its moving
// average of how long the last asks took, 250 ms at least, about a second
// after an editor's start under load), and each firing starts that wait
// over; an editor that loses the focus while it waits drops the ask until
// it has the focus again. Told again on fixed timers (0.75, 2 and 5 s, as
// before), a slow ask was put off each time: the lens came 1.7 to 2 s
// late on a loaded machine, 10 to 17 s on a busier one. So the review
// tells once, and again only when VS Code has not asked for a file's
// lenses three times as long as it took to ask before (two seconds at
// least; five before it ever asked): an ask under way is then not put
// off, and one the editor dropped is made again.

/** The least time to wait for VS Code's ask before telling again. */
const leastWait = 2000;
/** The wait before VS Code has ever asked, when how long it takes is unknown. */
const firstWait = 5000;
/** How many times a file is told again at most, per change. */
const retells = 2;

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
    return this.took === 0 ? firstWait : Math.max(leastWait, 3 * this.took);
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
