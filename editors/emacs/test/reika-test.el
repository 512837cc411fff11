;;; reika-test.el --- eglot scenarios for editors/eglot_test.go  -*- lexical-binding: t -*-

;; Run after the README's snippets (the eglot entry, the reika package),
;; in the workspace:
;;   emacs --batch -l SNIPPET.el -l reika-test.el --eval '(reika-test-main "apply")'
;; Each scenario drives eglot as a user does (M-x eglot, a code action,
;; commands), waits for what the server sends with a deadline, checks the
;; buffer, prints "ok NAME" and exits 0, or prints why and exits 1.

(require 'cl-lib)
(require 'subr-x)
(require 'eglot)
(require 'json)

(defvar reika-test-bare (equal (getenv "REIKA_TEST_BARE") "1")
  "Set when the scenario runs with eglot alone, without the package:
an ask is a code action, and eglot's idle timer (which batch mode does
not run) is played by `reika-test-idle-send'.")
(unless reika-test-bare (require 'reika))

;; Every applyEdit would ask "Server wants to edit ... Proceed?" on stdin;
;; the user says yes.
(setq eglot-confirm-server-initiated-edits nil)

(defvar reika-test-messages nil "The server's showMessages, oldest first: (TYPE . TEXT).")
(defvar reika-test-status nil "The reika/status notifications' params, oldest first.")
(defvar reika-test-progress nil "The $/progress values, oldest first (eglot 1.9 gets none).")
(defvar reika-test-apply-answers nil
  "How the client answered each workspace/applyEdit: t (applied), the
answer (:applied :json-false :failureReason …), or the error.")
(defvar reika-test-before-apply nil "A function run once when the next workspace/applyEdit arrives.")
(defvar reika-test-after-apply nil "A function run once after the next workspace/applyEdit is answered, with the answer.")
(defvar reika-test-mode-line nil "What `reika-mode-line-string' held, oldest first.")

(add-variable-watcher 'reika-mode-line-string
                      (lambda (_sym new _op _where)
                        (when new (setq reika-test-mode-line (append reika-test-mode-line (list new))))))

(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql window/showMessage)) &key type message)
  (setq reika-test-messages (append reika-test-messages (list (cons type message)))))

(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql $/progress)) &key value &allow-other-keys)
  (setq reika-test-progress (append reika-test-progress (list value))))

(cl-defmethod eglot-handle-notification
  (_server (_method (eql reika/status)) &rest params)
  (setq reika-test-status (append reika-test-status (list params))))

;; The user's typing while the edit is on its way: an advice around the
;; whole of eglot-handle-request, so that it runs before every method
;; (the package's handler and eglot's), which then see a newer buffer
;; than the edit's, not yet sent to the server.
(defun reika-test--around-request (handle server method &rest params)
  (if (not (eq method 'workspace/applyEdit))
      (apply handle server method params)
    (when reika-test-before-apply
      (let ((f reika-test-before-apply))
        (setq reika-test-before-apply nil)
        (funcall f)))
    (condition-case err
        (let ((answer (apply handle server method params)))
          (setq reika-test-apply-answers
                (append reika-test-apply-answers
                        (list (if (eq (plist-get answer :applied) t) t answer))))
          (when reika-test-after-apply
            (let ((f reika-test-after-apply))
              (setq reika-test-after-apply nil)
              (funcall f answer)))
          answer)
      (error
       (setq reika-test-apply-answers (append reika-test-apply-answers (list err)))
       (signal (car err) (cdr err))))))
(advice-add 'eglot-handle-request :around #'reika-test--around-request)

(defun reika-test-fail (fmt &rest args)
  (error "%s" (apply #'format fmt args)))

(defvar reika-test-nudged 0 "How many times `reika-test-nudge' found a parked message.")
(defvar reika-test-nudging t
  "Whether `reika-test-wait' reads parked messages itself; nil in the
scenarios that show what an interactive Emacs, which does not, shows.")

(defun reika-test-nudge ()
  "Parse what eglot's connection has received but not read.
Emacs 28's jsonrpc (1.0.14) reads a reply to a request it waits for
inside its process filter and leaves the filter by a `throw': messages
that came in the same read as that reply stay parked in the process
buffer until more data arrives (in an interactive Emacs, with the reply
to the user's next request). Running the filter on no new data reads
them, as that next arrival would."
  (let* ((server (eglot-current-server))
         (proc (and server (jsonrpc--process server))))
    (when (and reika-test-nudging proc (buffer-live-p (process-buffer proc)))
      (let ((n (+ (length reika-test-messages) (length reika-test-status))))
        (jsonrpc--process-filter proc "")
        (when (/= n (+ (length reika-test-messages) (length reika-test-status)))
          (setq reika-test-nudged (1+ reika-test-nudged)))))))

(defvar reika-test-pending-since nil
  "When eglot's buffer last got changes it has not sent (`float-time').")

(defun reika-test-idle-send ()
  "What eglot's idle timer does in an interactive Emacs: send the buffer's
changes once they have waited `eglot-send-changes-idle-time'. Batch mode
runs no idle timers; with eglot alone nothing else would send them."
  (let ((buf (get-file-buffer (expand-file-name "greet.go"))))
    (when (and reika-test-bare buf)
      (with-current-buffer buf
        (cond
         ((not eglot--recent-changes) (setq reika-test-pending-since nil))
         ((not reika-test-pending-since) (setq reika-test-pending-since (float-time)))
         ((>= (- (float-time) reika-test-pending-since) eglot-send-changes-idle-time)
          (setq reika-test-pending-since nil)
          (eglot--signal-textDocument/didChange)))))))

(defun reika-test-wait (what pred &optional seconds)
  "Process the server's messages until PRED returns non-nil; fail after SECONDS (10).
SECONDS is multiplied by REIKA_TEST_SLOW, the tests' slowness factor."
  (let* ((slow (string-to-number (or (getenv "REIKA_TEST_SLOW") "1")))
         (seconds (* (or seconds 10) (if (>= slow 1) slow 1)))
         (deadline (+ (float-time) seconds))
         v)
    (while (and (not (setq v (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05)
      (reika-test-nudge)
      (reika-test-idle-send))
    (or v (reika-test-fail "no %s within %ss; messages: %S; status: %S"
                           what seconds reika-test-messages (last reika-test-status)))))

(defun reika-test-mark ()
  "Where the server's messages and statuses are now; a run starts after it."
  (cons (length reika-test-messages) (length reika-test-status)))

(defun reika-test-end-message (mark)
  (cdr (cl-find-if (lambda (m) (string-match-p "\\`Reika\\(:\\| stopped\\)" (cdr m)))
                   (nthcdr (car mark) reika-test-messages))))

(defun reika-test-run-end (mark &optional seconds)
  "Wait for the end of a run started after MARK: a reika/status says it
runs, a later one that it stopped, and a showMessage reports it. Return
that message's text. eglot 1.9 shows no progress, so the status is the
only sign of a run's end."
  (let ((running (reika-test-wait "a running reika/status"
                                  (lambda () (cl-position t (nthcdr (cdr mark) reika-test-status)
                                                          :key (lambda (s) (plist-get s :running))))
                                  seconds)))
    (reika-test-wait "the end of the run (reika/status running false)"
                     (lambda () (cl-position :json-false (nthcdr (+ (cdr mark) running 1) reika-test-status)
                                             :key (lambda (s) (plist-get s :running))))
                     seconds)
    (reika-test-wait "the end-of-run showMessage" (lambda () (reika-test-end-message mark)) seconds)))

(defun reika-test-open (file)
  "Visit FILE and start eglot on it as M-x eglot does; return the server."
  (find-file (expand-file-name file))
  ;; Emacs 29 and later visit a .go file in go-ts-mode when the Go
  ;; tree-sitter grammar is installed; none is packaged for Debian's
  ;; libtree-sitter, so the mode is chosen by hand (it runs without the
  ;; grammar, without highlighting).
  (when (and (eq major-mode 'fundamental-mode) (fboundp 'go-ts-mode) (string-suffix-p ".go" file))
    (let ((warning-minimum-log-level :error)) (go-ts-mode)))
  (call-interactively #'eglot)
  (reika-test-wait "an eglot connection" #'eglot-current-server)
  (reika-test-wait "the server's status" (lambda () reika-test-status))
  (eglot-current-server))

(defun reika-test-execute (command &optional instruction)
  "Run COMMAND as the user does with the package's commands: reika.ask
is `M-x reika' at the point."
  (pcase command
    ((and "reika.ask" (guard reika-test-bare))
     ;; With eglot alone the user asks through a code action.
     (ignore instruction)
     (eglot-code-actions (line-beginning-position) (line-end-position) "quickfix.reika" t)
     '(:started t))
    ("reika.ask" (reika instruction))
    ("reika.cancel" (reika-cancel))
    ("reika.compact" (reika-compact))
    ("reika.status" (reika-status))
    (_ (reika-test-fail "no command of the package runs %s" command))))

(defun reika-test-goto (text)
  (goto-char (point-min))
  (unless (search-forward text nil t) (reika-test-fail "no %S in %s" text (buffer-name)))
  (goto-char (match-beginning 0)))

(defconst reika-test-greet
  "package greet\n\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn \"hello, \" + name\n}\n")

(defconst reika-test-applied-claim
  "\\b[0-9]+ changes? applied\\b\\|\\bapplied \\(its\\|the\\|[0-9]+\\) changes?\\b")

(defun reika-test-buffer () (buffer-substring-no-properties (point-min) (point-max)))

(defun reika-test-check (what ok &rest details)
  (unless ok (reika-test-fail "%s: %S" what details)))

(defun reika-test-typed-while-editing (server start end text before after)
  "The user replaces START..END (buffer positions) with TEXT just before
the agent's edit arrives; eglot sends that didChange only later (its idle
timer). The buffer must end as BEFORE or as AFTER (nil when the edit
cannot be placed). Return which."
  (setq reika-test-before-apply
        (lambda ()
          (with-current-buffer (get-file-buffer (expand-file-name "greet.go"))
            (save-excursion (delete-region start end) (goto-char start) (insert text)))))
  (reika-test-goto "return")
  (let ((mark (reika-test-mark))
        (res (reika-test-execute "reika.ask" "Capitalize the greeting.")))
    (reika-test-check "reika.ask started" (eq (plist-get res :started) t) res)
    (reika-test-wait "eglot's answer to the applyEdit" (lambda () reika-test-apply-answers))
    ;; The package sends eglot's pending change first and refuses the
    ;; stale edit (eglot 1.17 alone would take it as current: it counts
    ;; versions only when it sends the didChange). Either way, the buffer
    ;; below must not have it on the wrong line.
    (princ (format "the client answered the applyEdit: %S\n" (car reika-test-apply-answers)))
    (eglot--signal-textDocument/didChange) ; what eglot's idle timer does
    (reika-test-typed-end mark before after)))

(defun reika-test-typed-end (mark before after)
  (let* ((message (reika-test-run-end mark))
         (got (reika-test-buffer)))
    (cond
     ((not (or (equal got before) (and after (equal got after))))
      ;; eglot 1.17 (Emacs 30) applied the stale edit where it no longer
      ;; belongs: only the client could have prevented that. The server
      ;; must see it in the next didChange and say so, never "applied".
      (reika-test-check "the end of the run claims no change that is not where planned"
                        (not (string-match-p reika-test-applied-claim message)) message)
      (reika-test-check "the user was told the edit did not land as planned"
                        (cl-some (lambda (m) (string-match-p "did not land as planned" (cdr m))) reika-test-messages)
                        (list got reika-test-messages))
      "landed astray, and said so")
     ((not (equal got before))
        "placed around the user's text")
     (t
      (reika-test-check "the end of the run claims no change that is not there"
                        (not (string-match-p reika-test-applied-claim message)) message)
      (reika-test-check "someone said the change was not applied"
                        (cl-some (lambda (m) (string-match-p "not applied" (cdr m))) reika-test-messages)
                        reika-test-messages)
      "not applied"))))

(defun reika-test-apply ()
  "A code action, picked by kind as eglot does with one match, becomes
reika.ask; the agent's edit lands in the buffer."
  (let ((server (reika-test-open "greet.go")))
    (reika-test-goto "return")
    (let ((mark (reika-test-mark)))
     (eglot-code-actions (line-beginning-position) (line-end-position) "quickfix.reika" t)
     (let ((message (reika-test-run-end mark)))
      (reika-test-check "the edit landed in the buffer"
                        (equal (reika-test-buffer)
                               (replace-regexp-in-string "return \"hello, \" \\+ name"
                                                         "return \"Hello, \" + name + \"!\"" reika-test-greet t t))
                        (reika-test-buffer))
      (reika-test-check "eglot applied it" (equal reika-test-apply-answers '(t)) reika-test-apply-answers)
      (reika-test-check "the answer" (string-match-p "Greet now capitalizes" message) message)
      (reika-test-check "the answer in *reika*"
                        (string-match-p "Greet now capitalizes"
                                        (with-current-buffer reika-answer-buffer-name (buffer-string))))
      (reika-test-check "the progress in the mode line"
                        (cl-some (lambda (s) (string-match-p "\\` Reika: round 1 · " s)) reika-test-mode-line)
                        reika-test-mode-line)
      (reika-test-check "the mode line is clear after the run" (null reika-mode-line-string) reika-mode-line-string)
      (reika-test-check "nothing said not applied"
                        (not (cl-some (lambda (m) (string-match-p "not applied" (cdr m))) reika-test-messages))
                        reika-test-messages)
      (let ((chip (plist-get (car (last reika-test-status)) :text)))
        (reika-test-check "the chip" (and chip (string-match-p "\\`ctx [^ ]+/8\\.2k" chip)) chip))
      (ignore server)))))

(defun reika-test-typing ()
  "The user types a line at the top just before the edit arrives."
  (let* ((server (reika-test-open "greet.go"))
         (before (concat "// typed by the user\n" reika-test-greet)))
    (let ((how (reika-test-typed-while-editing
                server 1 1 "// typed by the user\n" before
                (replace-regexp-in-string "return \"hello, \" \\+ name"
                                          "return \"Hello, \" + name + \"!\"" before t t))))
      ;; The package refused the stale edit and the server placed it
      ;; again on the user's text, in Emacs 30 as in Emacs 28.
      (reika-test-check "placed around the user's text" (equal how "placed around the user's text") how)
      (reika-test-check "the stale edit refused, then the placed one applied"
                        (and (eq (plist-get (car reika-test-apply-answers) :applied) :json-false)
                             (string-match-p "\\`the document changed since (version [0-9]+, now [0-9]+)\\'"
                                             (plist-get (car reika-test-apply-answers) :failureReason))
                             (eq (car (last reika-test-apply-answers)) t))
                        reika-test-apply-answers))))

(defun reika-test-typing-line ()
  "The user rewrites the very line the edit is about: it cannot land."
  (let* ((server (reika-test-open "greet.go"))
         (start (progn (reika-test-goto "\"hello, \"") (point)))
         (before (replace-regexp-in-string "\"hello, \"" "\"hi, \"" reika-test-greet t t)))
    (let ((how (reika-test-typed-while-editing server start (+ start 9) "\"hi, \"" before nil)))
      (reika-test-check "not applied" (equal how "not applied") how))))

(defun reika-test-cancel ()
  "reika.cancel mid-run stops it at once; nothing lands."
  (let* ((server (reika-test-open "greet.go"))
         (mark (reika-test-mark)))
    (let ((res (reika-test-execute "reika.ask" "Capitalize the greeting.")))
      (reika-test-check "reika.ask started" (eq (plist-get res :started) t) res))
    ;; The sign of a run under way (the engine takes 4 s to answer): to
    ;; eglot 1.9, which shows no progress, the server's notice that it
    ;; works on it; to a later eglot, the progress.
    (reika-test-wait "a sign of a run under way"
                     (lambda () (or (nthcdr (car mark) reika-test-messages) reika-test-progress)))
    (let ((t0 (float-time))
          (res (reika-test-execute "reika.cancel")))
      (reika-test-check "cancelled" (eq (plist-get res :cancelled) t) res)
      (let ((message (reika-test-wait "the end-of-run showMessage" (lambda () (reika-test-end-message mark)) 2.5)))
        (reika-test-check "within 2.5 s" (< (- (float-time) t0) 2.5))
        (reika-test-check "the user is told" (string-match-p "stopped: cancelled" message) message)))
    (reika-test-check "no edit arrived" (null reika-test-apply-answers) reika-test-apply-answers)
    (reika-test-check "the buffer is as it was" (equal (reika-test-buffer) reika-test-greet) (reika-test-buffer))))

(defun reika-test-compact ()
  "reika.compact after a long run folds the conversation."
  (let* ((server (reika-test-open "greet.go"))
         (mark (reika-test-mark)))
    (let ((res (reika-test-execute "reika.ask" "Read the three build logs under logs/ and tell me if they passed.")))
      (reika-test-check "reika.ask started" (eq (plist-get res :started) t) res))
    (let ((message (reika-test-run-end mark)))
      (reika-test-check "the answer" (string-match-p "All three builds passed" message) message))
    (let* ((from (length reika-test-messages))
           (res (reika-test-execute "reika.compact")))
      (reika-test-check "compacted" (eq (plist-get res :compacted) t) res)
      (reika-test-check "smaller" (< (plist-get res :after) (plist-get res :before)) res)
      (reika-test-wait "the fold's message"
                       (lambda () (cl-some (lambda (m) (string-match-p "folded the conversation: [0-9]+ → [0-9]+ tokens" (cdr m)))
                                           (nthcdr from reika-test-messages)))))))

(defun reika-test-progress (&optional action)
  "M-x reika (the code action when ACTION), the server's messages read
only as they arrive, as in an interactive Emacs: Emacs 28's jsonrpc
leaves the messages that came with the command's answer (the progress's
create) unread until more arrive, which the package reads at once; the
run's rounds reach the mode line."
  (reika-test-open "greet.go")
  (reika-test-goto "return")
  (let ((mark (reika-test-mark))
        (reika-test-nudging nil))
    (if action
        (eglot-code-actions (line-beginning-position) (line-end-position) "quickfix.reika" t)
      (let ((res (reika-test-execute "reika.ask" "What does Greet say?")))
        (reika-test-check "reika.ask started" (eq (plist-get res :started) t) res)))
    (let ((message (reika-test-run-end mark)))
      (reika-test-check "the answer" (string-match-p "Greet says hello" message) message))
    (reika-test-check "the progress in the mode line"
                      (cl-some (lambda (s) (string-match-p "\\` Reika: round 1 · " s)) reika-test-mode-line)
                      reika-test-mode-line reika-test-progress)
    (reika-test-check "the mode line is clear after the run" (null reika-mode-line-string) reika-mode-line-string)))

(defun reika-test-progress-action ()
  "`reika-test-progress' through eglot's code action."
  (reika-test-progress t))

(defun reika-test-undo-run ()
  "`reika-undo-run' right after a run whose edit eglot has not sent yet
(its idle timer has not run; batch mode runs none): the package sends
eglot's pending changes before the command, and the run's edit is
taken back."
  (reika-test-open "greet.go")
  (reika-test-goto "return")
  (let ((mark (reika-test-mark)))
    (let ((res (reika-test-execute "reika.ask" "Capitalize the greeting.")))
      (reika-test-check "reika.ask started" (eq (plist-get res :started) t) res))
    (reika-test-run-end mark 20)
    (reika-test-check "the edit landed"
                      (string-match-p "return \"Hello, \" \\+ name \\+ \"!\"" (reika-test-buffer))
                      (reika-test-buffer))
    (let ((res (reika-undo-run)))
      (reika-test-check "undone" (and (eq (plist-get res :undone) t) (eql (plist-get res :reverted) 1)) res)
      (reika-test-wait "the buffer as it was" (lambda () (equal (reika-test-buffer) reika-test-greet))))))

;;; Trials: the Go side judges what they record (REIKA_TEST_OUT, JSON).

(defun reika-test-out (value)
  (with-temp-file (or (getenv "REIKA_TEST_OUT") (reika-test-fail "REIKA_TEST_OUT is not set"))
    (insert (json-encode value))))

(defun reika-test-lines ()
  (vconcat (split-string (string-remove-suffix "\n" (reika-test-buffer)) "\n")))

(defun reika-test-answer-string (a)
  (cond ((eq a t) "applied")
        ((and (listp a) (plist-member a :applied)) (format "refused: %s" (plist-get a :failureReason)))
        (t (format "error: %S" a))))

(defun reika-test-race ()
  "REIKA_TEST_TRIALS asks in one session, one per function Fi of greet.go;
each edit arrives just after the user typed a line above its function
(at the top of the file for odd i, right above Fi for even i), which
eglot has not sent yet."
  (let* ((file (expand-file-name "greet.go"))
         (server (reika-test-open "greet.go"))
         (n (string-to-number (or (getenv "REIKA_TEST_TRIALS") "10")))
         (trials nil))
    (dotimes (k n)
      (let* ((i (1+ k))
             (typed (format "// typed before F%d" i))
             (mark (reika-test-mark))
             (from (length reika-test-apply-answers)))
        (setq reika-test-before-apply
              (lambda ()
                (with-current-buffer (get-file-buffer file)
                  (save-excursion
                    (if (cl-oddp i)
                        (goto-char (point-min))
                      (reika-test-goto (format "// F%d says hello." i)))
                    (insert typed "\n")))))
        (reika-test-goto (format "return \"hello %d, " i))
        (let ((res (reika-test-execute "reika.ask" (format "Capitalize F%d's greeting." i))))
          (reika-test-check "reika.ask started" (eq (plist-get res :started) t) res))
        (reika-test-wait "an applyEdit" (lambda () (nthcdr from reika-test-apply-answers)))
        (eglot--signal-textDocument/didChange) ; what eglot's idle timer does
        (let ((final (reika-test-run-end mark)))
          (eglot--signal-textDocument/didChange)
          (push `((lines . ,(reika-test-lines))
                  (answers . ,(vconcat (mapcar #'reika-test-answer-string
                                               (nthcdr from reika-test-apply-answers))))
                  (final . ,final))
                trials))))
    (ignore server)
    (reika-test-out (vconcat (nreverse trials)))))

(defun reika-test-undo ()
  "The agent's edit lands; the user undoes it 50 ms later, before eglot
sent the edit's didChange (its idle timer): the server gets the edit and
its undo in one didChange and must not apply the edit again."
  (let* ((server (reika-test-open "greet.go"))
         (buf (current-buffer))
         (undone nil))
    (setq reika-test-after-apply
          (lambda (answer)
            (when (eq (plist-get answer :applied) t)
              (run-with-timer
               0.05 nil
               (lambda ()
                 (with-current-buffer buf
                   (undo-boundary)
                   (let ((last-command nil)) (undo))
                   (setq undone (reika-test-lines))
                   (eglot--signal-textDocument/didChange)))))))
    (reika-test-goto "return")
    (let ((mark (reika-test-mark)))
      (let ((res (reika-test-execute "reika.ask" "Capitalize the greeting.")))
        (reika-test-check "reika.ask started" (eq (plist-get res :started) t) res))
      (let ((final (reika-test-run-end mark)))
        (reika-test-wait "the user's undo" (lambda () undone))
        ;; Time for the server to send the edit again, if it does.
        (let ((until (+ (float-time) 1.0)))
          (while (< (float-time) until) (accept-process-output nil 0.05) (reika-test-nudge)))
        (eglot--signal-textDocument/didChange)
        (ignore server)
        (reika-test-out `((lines . ,(reika-test-lines))
                          (undone . ,undone)
                          (answers . ,(vconcat (mapcar #'reika-test-answer-string reika-test-apply-answers)))
                          (final . ,final)))))))

(defun reika-test-main (name)
  (let ((ok (condition-case err
                (progn (funcall (intern (concat "reika-test-" name))) t)
              (error
               (princ (format "FAIL %s: %s\n" name (error-message-string err)))
               (ignore-errors
                 (princ (with-current-buffer (jsonrpc-events-buffer (eglot-current-server))
                          (format "eglot's events:\n%s\n" (buffer-string)))))
               nil))))
    (ignore-errors (let ((s (eglot-current-server))) (when s (eglot-shutdown s))))
    (when ok (princ (format "ok %s (messages parked by jsonrpc and read by a nudge: %d)\n" name reika-test-nudged)))
    (kill-emacs (if ok 0 1))))

;;; reika-test.el ends here
