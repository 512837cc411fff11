// The names Reika adds to the protocol, mirrored from lsp/names.go: this
// file is the only place the extension spells them, and
// editors/names_test.go fails when the two drift apart.

/** Runs the agent: {instruction, uri?, range?}. */
export const cmdAsk = "reika.ask";
/** Writes the note and folds now. */
export const cmdCompact = "reika.compact";
/** Returns (and shows) the ctx chip and the budget. */
export const cmdStatus = "reika.status";
/** Stops the run under way. */
export const cmdCancel = "reika.cancel";
/** Writes the whole transcript as Markdown and opens it. */
export const cmdSave = "reika.save";
/** Starts a new session. */
export const cmdNewSession = "reika.newSession";
/** Continues the workspace's previous session from its transcript, or the session {id}. */
export const cmdResume = "reika.resume";
/** Lists the workspace's sessions, newest first: {sessions: [{id, title, updated, current?}]}. */
export const cmdListSessions = "reika.listSessions";
/** Switches to {model}, one the engine serves; without one, says the model and those served. */
export const cmdSetModel = "reika.setModel";
/** Opens the current recap as a document the user can edit. */
export const cmdShowRecap = "reika.showRecap";
/** Answer a proposal offered as code actions (clients without applyEdit). */
export const cmdApplyProposal = "reika.applyProposal";
export const cmdApplyHunk = "reika.applyHunk";
export const cmdRejectProposal = "reika.rejectProposal";
/** Reverts the edits the last run applied, where the text since is unchanged. */
export const cmdUndoRun = "reika.undoRun";

/** reika.ask's trust for a read-only run whose answer ends in a numbered plan. */
export const trustPlan = "plan";

/** Every command the server executes, in the order initialize advertises them. */
export const commands = [
  cmdAsk, cmdCompact, cmdStatus, cmdCancel, cmdSave, cmdNewSession, cmdResume, cmdShowRecap,
  cmdApplyProposal, cmdApplyHunk, cmdRejectProposal, cmdUndoRun, cmdListSessions, cmdSetModel,
];

/** Carries the ctx chip's fields to the status bar. */
export const statusNotification = "reika/status";

/** Carries a run's answer in full, before the message that ends the run. */
export const answerNotification = "reika/answer";

/**
 * True in the client's experimental capabilities: the client shows
 * reika/answer whole (the panel), and the server opens no document with it.
 */
export const answersCapability = "reikaAnswers";

/** reika/answer's params. */
export interface AnswerParams {
  answer: string; // as the model wrote it (Markdown)
  chip: string;
  summary: string; // what the run changed
}

/** reika/status's params: the ctx chip's fields. */
export interface StatusParams {
  breakdown?: Breakdown; // the last request by part, in tokens (absent before a session)
  percent: number; // of the shed point
  running: boolean; // a run is under way
  shed_point: number;
  size: number; // tokens in the last request
  text: string; // the chip as the status line shows it
  warn: boolean; // a shed is near
  window: number;
}

/** The window at a glance, in tokens: the parts add up to size; size, reserve and free to the window. */
export interface Breakdown {
  prefix: number; // system prompt, tools, bootstrap (the repo map aside)
  repo_map: number;
  recap: number;
  history: number;
  tools: number; // tool results
  size: number;
  reserve: number;
  free: number;
  window: number;
}

/** reika.ask's answer: a run started, or the ask joined the run under way, or waits to run after it. */
export interface AskResult {
  joined?: boolean;
  queued?: boolean;
  reason?: string;
  started: boolean;
}

/** reika.undoRun's answer: hunks reverted, those left alone ("a.go line 7"), or why nothing was done. */
export interface UndoResult {
  kept?: string[];
  reason?: string;
  reverted: number;
  undone: boolean;
}

/** reika.cancel's answer. */
export interface CancelResult {
  cancelled: boolean;
}

/** reika.newSession's answer. */
export interface NewSessionResult {
  ok: boolean;
}

/** reika.status's answer (the budget left out: the server shows it). */
export interface StatusResult {
  chip: string;
  endpoint: string;
  model: string;
  percent: number;
  running: boolean;
  size: number;
  transcript: string;
  warn: boolean;
  window: number;
}

/** reika.compact's answer. */
export interface CompactResult {
  after: number;
  before: number;
  compacted: boolean;
  reason?: string;
  recap_chars?: number;
}

/** reika.save's answer. */
export interface PathResult {
  path: string;
}

/** reika.showRecap's answer: Recap false when there is no recap yet. */
export interface RecapResult {
  path?: string;
  recap?: boolean;
}

/** reika.resume's answer. */
export interface ResumeResult {
  messages?: number;
  path?: string;
  resumed: boolean;
}
