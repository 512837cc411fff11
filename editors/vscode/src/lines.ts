import * as names from "./names";

// What each command's result says, in one line. The server shows its own
// messages too (the end of a run, the fold's sizes); these lines answer
// the command itself.

export function askLine(r: names.AskResult): string {
  if (r.started) {
    return "Reika: working on it";
  }
  if (r.joined) {
    return "Reika: added to the run under way";
  }
  if (r.queued) {
    return "Reika: queued after the run under way";
  }
  return `Reika did not start: ${r.reason ?? "the server gave no reason"}`;
}

export function compactLine(r: names.CompactResult): string {
  if (!r.compacted) {
    return `Reika: nothing folded: ${r.reason ?? "the server gave no reason"}`;
  }
  const recap = r.recap_chars ? `, with a recap of ${r.recap_chars} characters` : "";
  return `Reika folded the conversation: ${r.before} → ${r.after} tokens${recap}`;
}

export function cancelLine(r: names.CancelResult): string {
  return r.cancelled ? "Reika: the run was cancelled" : "Reika: no run to cancel";
}

export function statusLine(r: names.StatusResult): string {
  const run = r.running ? " · running" : "";
  return `Reika: ${r.chip}${run} · ${r.model} at ${r.endpoint}`;
}

export function saveLine(r: names.PathResult): string {
  return `Reika: the transcript is in ${r.path}`;
}

export function newSessionLine(r: names.NewSessionResult): string {
  return r.ok ? "Reika: a new session starts with the next request" : "Reika: no new session";
}

export function resumeLine(r: names.ResumeResult): string {
  if (!r.resumed) {
    return "Reika: no previous session to resume in this workspace";
  }
  return `Reika: resumed ${r.messages ?? 0} messages from ${r.path ?? "the transcript"}`;
}

export function undoLine(r: names.UndoResult): string {
  if (!r.undone) {
    return `Reika undid nothing: ${r.reason ?? (r.kept ?? []).join(", ")}`;
  }
  const kept = r.kept && r.kept.length > 0 ? `; left alone, changed since: ${r.kept.join(", ")}` : "";
  return `Reika undid ${r.reverted} change${r.reverted === 1 ? "" : "s"} of the last run${kept}`;
}

export function recapLine(r: names.RecapResult): string {
  if (r.recap === false || !r.path) {
    return "Reika: no recap yet (the conversation has not been folded)";
  }
  return `Reika: the recap is in ${r.path}; edit and save it to replace it`;
}
