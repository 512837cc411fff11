import * as vscode from "vscode";
import { Breakdown, StatusParams } from "./names";

/** The share of the shed point from which the chip turns to a warning. */
export const warnPercent = 80;

/**
 * The ctx chip in the status bar: the text of the last reika/status, on
 * the warning background when a shed is near. Clicking it opens the
 * conversation.
 */
export class StatusChip implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private last: StatusParams | undefined;
  private warning = false;
  private error = false;

  constructor(private readonly command: string) {
    this.item = vscode.window.createStatusBarItem("reika.ctx", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "Reika context";
    this.item.command = command;
    this.item.text = "Reika";
    this.item.tooltip = "Reika: no request yet. Click for the conversation.";
    this.item.show();
  }

  update(p: StatusParams): void {
    this.last = p;
    this.item.text = (p.running ? "$(sync~spin) " : "") + p.text;
    const parts = p.breakdown ? `\n${breakdownLine(p.breakdown)}` : "";
    this.item.tooltip = `Reika: ${p.size} of ${p.window} tokens in the last request; the oldest turns fold at ${p.shed_point} (${p.percent}%).${parts}\nClick for the conversation.`;
    this.warning = warns(p);
    this.error = false;
    this.item.command = this.command;
    this.item.backgroundColor = this.warning ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  /** Shows that there is no server, and why, until the next start. */
  failed(why: string): void {
    this.last = undefined;
    this.item.text = "$(error) Reika";
    this.item.tooltip = why;
    this.warning = false;
    this.error = true;
    this.item.command = this.command;
    this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
  }

  /**
   * Shows that no reika-lsp was found, without the error colour: clicking
   * offers to install it.
   */
  missing(why: string, install: string): void {
    this.last = undefined;
    this.item.text = "$(cloud-download) Reika: install the server";
    this.item.tooltip = `${why}. Click to install it.`;
    this.item.command = install;
    this.warning = false;
    this.error = false;
    this.item.backgroundColor = undefined;
  }

  /** What the chip shows now: for the extension's API (and its tests). */
  state(): { text: string; tooltip: string; warning: boolean; error: boolean; last?: StatusParams } {
    return {
      text: this.item.text,
      tooltip: String(this.item.tooltip ?? ""),
      warning: this.warning,
      error: this.error,
      last: this.last,
    };
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** The window by part, on one line: "prefix 2100 · map 900 · recap 0 · history 1200 · tools 3000 · reserve 2048 · free 6800". */
export function breakdownLine(b: Breakdown): string {
  const parts = [`prefix ${b.prefix}`, `map ${b.repo_map}`, `recap ${b.recap}`, `history ${b.history}`, `tools ${b.tools}`];
  if (b.window > 0) {
    parts.push(`reserve ${b.reserve}`, `free ${b.free}`);
  }
  return parts.join(" · ");
}

/** Whether the chip warns: the server says so, or the prompt is near the shed point. */
export function warns(p: StatusParams): boolean {
  return p.warn || p.percent >= warnPercent;
}
